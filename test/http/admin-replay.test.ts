import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway } from "../support/gateway.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";

const TOKEN = "test-admin-token-0123456789";
const h = gatewayWithEmulator({ ADMIN_TOKEN: TOKEN, DELIVERY_POLL_MS: "50" });

function replay(eventId: string, body: unknown, token: string | null = TOKEN) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return call(`${h.gw.url}/integration/v1/admin/events/${eventId}/replay`, {
    method: "POST",
    body: JSON.stringify(body),
    headers,
  });
}

async function settledStatus(eventId: string): Promise<Record<string, unknown>> {
  await h.gw.gateway.deliverer.idle();
  return (await call(`${h.gw.url}/integration/v1/orders/paid/${eventId}`)).json();
}

describe("POST /integration/v1/admin/events/{event_id}/replay", () => {
  it("refuses without a token (401) and with a wrong one (403)", async () => {
    const missing = await replay("x", { reason: "r" }, null);
    expect(missing.status).toBe(401);
    expect(missing.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(missing.json()).toMatchObject({ type: "/integration/v1/problems/unauthorized" });
    const wrong = await replay("x", { reason: "r" }, "not-the-token-at-all");
    expect(wrong.status).toBe(403);
    expect(wrong.json()).toMatchObject({ type: "/integration/v1/problems/forbidden" });
  });

  it("requires a reason and knows only recorded events", async () => {
    expect((await replay("x", {})).status).toBe(400);
    // The console and the CLI refuse a blank reason: so does the API, whatever its spaces.
    for (const blank of ["", " ", " \t\n "]) expect((await replay("x", { reason: blank })).status).toBe(400);
    expect((await replay("x", { reason: "r", force: "yes" })).status).toBe(400);
    expect((await replay("never-sent", { reason: "r" })).status).toBe(404);
  });

  it("sends a FAILED_FINAL event again once support fixed 1C, keeping its history and status URL", async () => {
    h.onec.setFaults({ knownSkus: ["TEA-001"] });
    const event = orderPaidEvent();
    const refused = await postEvent(h.gw.url, event);
    expect(refused.status).toBe(422);
    h.onec.setFaults({ knownSkus: null }); // the article was added in 1C

    const answer = await replay(event.event_id, { reason: "MUG-010 added to the catalogue", requested_by: "anna" });
    expect(answer.status).toBe(202);
    expect(answer.headers.location).toBe(`/integration/v1/orders/paid/${event.event_id}`);
    expect(answer.json()).toMatchObject({ event_id: event.event_id, replayed_from: "FAILED_FINAL" });

    expect(await settledStatus(event.event_id)).toMatchObject({ status: "SUCCEEDED", attempts: 2 });
    const history = (await call(`${h.gw.url}/integration/v1/orders/paid/${event.event_id}/attempts`)).json();
    expect((history.attempts as Array<{ outcome: string }>).map((a) => a.outcome)).toEqual(["rejected", "delivered"]);
    const repeat = await postEvent(h.gw.url, event);
    expect([repeat.status, repeat.headers["idempotent-replayed"]]).toEqual([200, "true"]);
    expect(h.onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
  });

  it("does not send a SUCCEEDED event again unless forced; forced, 1C answers with the order it has", async () => {
    const event = orderPaidEvent();
    const created = await postEvent(h.gw.url, event);
    expect(created.status).toBe(201);
    const refused = await replay(event.event_id, { reason: "just checking" });
    expect(refused.status).toBe(409);
    expect(refused.json()).toMatchObject({ type: "/integration/v1/problems/replay-refused" });

    const forced = await replay(event.event_id, { reason: "1C lost the document", force: true });
    expect(forced.status).toBe(202);
    const after = await settledStatus(event.event_id);
    expect(after).toMatchObject({ status: "SUCCEEDED", attempts: 2, order: created.json().order });
    expect(h.onec.orders().filter((o) => o.key === event.event_id)).toHaveLength(1);
    // The replayed event answers repeats with the same bytes as before.
    expect((await postEvent(h.gw.url, event)).text).toBe(created.text);
  });
});

describe("admin routes without ADMIN_TOKEN", () => {
  it("do not exist", async () => {
    const plain = await startTestGateway({ ONEC_URL: h.onec.url });
    try {
      const answer = await call(`${plain.url}/integration/v1/admin/events/x/replay`, {
        method: "POST",
        body: "{}",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      });
      expect(answer.status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
