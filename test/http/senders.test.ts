import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway } from "../support/gateway.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";

const SHOP_A = "token-of-shop-a-0123456789";
const SHOP_B = "token-of-shop-b-0123456789";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const h = gatewayWithEmulator({
  SENDER_TOKENS: `shop-a:${SHOP_A},shop-b:${SHOP_B}`,
  ALLOW_ANONYMOUS: "false",
  RATE_LIMIT_MAX: "1000",
});

describe("sender authentication", () => {
  it.each([
    ["no token", {}],
    ["a wrong token", bearer("token-of-nobody-0123456789")],
    ["another scheme", { authorization: `Basic ${Buffer.from(`shop-a:${SHOP_A}`).toString("base64")}` }],
  ])("answers 401 problem+json to %s and records nothing", async (_name, headers) => {
    const event = orderPaidEvent();
    const answer = await postEvent(h.gw.url, event, headers);
    expect(answer.status).toBe(401);
    expect(answer.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/unauthorized", status: 401 });
    expect(await h.gw.gateway.register.list({ limit: 1000 })).not.toContainEqual(
      expect.objectContaining({ eventId: event.event_id }),
    );
  });

  it("never writes a token to the log", async () => {
    await postEvent(h.gw.url, orderPaidEvent(), bearer(SHOP_A));
    await postEvent(h.gw.url, orderPaidEvent(), bearer("token-of-nobody-0123456789"));
    const text = JSON.stringify(h.gw.logs);
    expect(text).not.toContain(SHOP_A);
    expect(text).not.toContain("token-of-nobody");
  });

  it("gives two senders with one event_id two events and two 1C orders", async () => {
    const event = orderPaidEvent();
    const a = await postEvent(h.gw.url, event, bearer(SHOP_A));
    const b = await postEvent(h.gw.url, event, bearer(SHOP_B));
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.json().order).not.toEqual(b.json().order);
    expect(h.onec.orders().map((o) => o.key)).toEqual(
      expect.arrayContaining([`shop-a~${event.event_id}`, `shop-b~${event.event_id}`]),
    );
    // Each sender's repeat is its own replay.
    const againA = await postEvent(h.gw.url, event, bearer(SHOP_A));
    expect([againA.status, againA.text]).toEqual([200, a.text]);
  });

  it("hides a sender's status URL from another sender (404)", async () => {
    const event = orderPaidEvent();
    const created = await postEvent(h.gw.url, event, bearer(SHOP_A));
    const location = `${h.gw.url}${created.headers.location}`;
    expect((await call(location, { headers: bearer(SHOP_A) })).status).toBe(200);
    expect((await call(location, { headers: bearer(SHOP_B) })).status).toBe(404);
    expect((await call(`${location}/attempts`, { headers: bearer(SHOP_B) })).status).toBe(404);
    expect((await call(location)).status).toBe(401);
  });
});

describe("ALLOW_ANONYMOUS (README: ignored once senders exist)", () => {
  it("with ALLOW_ANONYMOUS=true and SENDER_TOKENS set, a POST without a token is 401 and records nothing", async () => {
    const gw = await startTestGateway({
      ONEC_URL: h.onec.url,
      SENDER_TOKENS: `shop-a:${SHOP_A}`,
      ALLOW_ANONYMOUS: "true",
    });
    try {
      const event = orderPaidEvent();
      const answer = await postEvent(gw.url, event);
      expect(answer.status).toBe(401);
      expect(answer.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/unauthorized", status: 401 });
      // Recorded under no sender: not as the anonymous "default", and nothing in the register at all.
      expect(await gw.gateway.register.find("default", event.event_id)).toBeUndefined();
      expect(await gw.gateway.register.list({ limit: 10 })).toEqual([]);
      const status = await call(`${gw.url}/integration/v1/orders/paid/${event.event_id}`, { headers: bearer(SHOP_A) });
      expect(status.status).toBe(404);
      // The configured sender is served as usual.
      expect((await postEvent(gw.url, event, bearer(SHOP_A))).status).toBe(201);
    } finally {
      await gw.close();
    }
  });
});

describe("rate limit per sender", () => {
  it("answers 429 with Retry-After past the limit, for that sender only, and never counts health", async () => {
    const limited = await startTestGateway({
      ONEC_URL: h.onec.url,
      SENDER_TOKENS: `shop-a:${SHOP_A},shop-b:${SHOP_B}`,
      RATE_LIMIT_MAX: "3",
      RATE_LIMIT_WINDOW_MS: "60000",
    });
    try {
      for (let i = 0; i < 5; i++) expect((await call(`${limited.url}/healthz`)).status).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await postEvent(limited.url, orderPaidEvent(), bearer(SHOP_A))).status);
      expect(statuses).toEqual([201, 201, 201, 429]);
      const refused = await postEvent(limited.url, orderPaidEvent(), bearer(SHOP_A));
      expect(refused.status).toBe(429);
      expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
      expect(refused.json()).toMatchObject({ type: "/integration/v1/problems/rate-limited", retryable: true });
      expect((await postEvent(limited.url, orderPaidEvent(), bearer(SHOP_B))).status).toBe(201);
    } finally {
      await limited.close();
    }
  });

  it("RATE_LIMIT_MAX=0 turns the limit off: more requests than the default 600 in one window, none refused", async () => {
    const unlimited = await startTestGateway({
      ONEC_URL: h.onec.url,
      SENDER_TOKENS: `shop-a:${SHOP_A}`,
      RATE_LIMIT_MAX: "0",
      RATE_LIMIT_WINDOW_MS: "3600000",
      DELIVERER: "off",
      SYNC_WAIT_MS: "0",
    });
    try {
      const statuses: Record<number, number> = {};
      const total = 700;
      let next = 0;
      const sendOne = async () => {
        while (next < total) {
          next++;
          const { status } = await postEvent(unlimited.url, orderPaidEvent(), bearer(SHOP_A));
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      };
      await Promise.all(Array.from({ length: 20 }, sendOne));
      expect(statuses).toEqual({ 202: total });
    } finally {
      await unlimited.close();
    }
  });
});
