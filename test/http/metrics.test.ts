import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";

const SHOP = "token-of-shop-m-0123456789";
const auth = { authorization: `Bearer ${SHOP}` };
const h = gatewayWithEmulator({
  SENDER_TOKENS: `shop-m:${SHOP}`,
  SYNC_WAIT_MS: "2000",
  BREAKER_FAILURES: "2",
  BREAKER_COOLDOWN_MS: "60000",
});

/** Every sample of the exposition as "name{labels}" → value. */
async function scrape(): Promise<Map<string, number>> {
  const answer = await call(`${h.gw.url}/metrics`);
  expect(answer.status).toBe(200);
  expect(answer.headers["content-type"]).toMatch(/^text\/plain/);
  const samples = new Map<string, number>();
  for (const line of answer.text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

function delta(before: Map<string, number>, after: Map<string, number>, key: string): number {
  return (after.get(key) ?? 0) - (before.get(key) ?? 0);
}

describe("GET /metrics", () => {
  it("moves as traffic flows: accepted, replayed, conflicts, rejections, attempts, 1C latency", async () => {
    const before = await scrape();
    const event = orderPaidEvent();
    expect((await postEvent(h.gw.url, event, auth)).status).toBe(201);
    expect((await postEvent(h.gw.url, event, auth)).status).toBe(200);
    const changed = structuredClone(event);
    changed.payment.id = "other";
    expect((await postEvent(h.gw.url, changed, auth)).status).toBe(409);
    expect((await postEvent(h.gw.url, "{oops", auth)).status).toBe(400);
    expect(
      (
        await postEvent(
          h.gw.url,
          orderPaidEvent((e) => {
            e.order.total = "1.00";
          }),
          auth,
        )
      ).status,
    ).toBe(422);
    expect((await postEvent(h.gw.url, orderPaidEvent())).status).toBe(401);
    // A status poll without a token is refused too, but it is no event: operations.md counts refused POSTs only.
    expect((await call(`${h.gw.url}/integration/v1/orders/paid/${event.event_id}`)).status).toBe(401);
    const after = await scrape();

    expect(delta(before, after, 'gateway_events_accepted_total{sender="shop-m"}')).toBe(1);
    expect(delta(before, after, 'gateway_events_replayed_total{sender="shop-m",status="200"}')).toBe(1);
    expect(delta(before, after, 'gateway_events_conflicts_total{sender="shop-m"}')).toBe(1);
    expect(delta(before, after, 'gateway_events_rejected_total{sender="shop-m",code="GW_ERR_INVALID_JSON"}')).toBe(1);
    expect(delta(before, after, 'gateway_events_rejected_total{sender="shop-m",code="GW_ERR_BUSINESS_RULES"}')).toBe(1);
    expect(delta(before, after, 'gateway_events_rejected_total{sender="-",code="GW_ERR_UNAUTHORIZED"}')).toBe(1);
    expect(delta(before, after, 'gateway_delivery_attempts_total{outcome="delivered"}')).toBe(1);
    expect(delta(before, after, 'gateway_onec_request_duration_seconds_count{outcome="delivered"}')).toBe(1);
    expect(after.get("gateway_breaker_state")).toBe(0);
  });

  it("shows the backlog, its age and the breaker while 1C is down", async () => {
    h.onec.setFaults({ unavailable: true, retryAfterSeconds: 60 });
    try {
      for (let i = 0; i < 3; i++) expect((await postEvent(h.gw.url, orderPaidEvent(), auth)).status).toBe(202);
      await h.gw.gateway.deliverer.idle();
      const down = await scrape();
      expect(down.get("gateway_pending_events")).toBeGreaterThanOrEqual(3);
      expect(down.get("gateway_oldest_pending_age_seconds")).toBeGreaterThan(0);
      expect(down.get("gateway_breaker_state")).toBe(2);
      expect(down.get('gateway_delivery_attempts_total{outcome="retryable"}')).toBeGreaterThanOrEqual(2);
    } finally {
      h.onec.setFaults({ unavailable: false });
    }
  });

  it("is not rate-limited or authenticated", async () => {
    expect((await call(`${h.gw.url}/metrics`)).status).toBe(200);
  });
});
