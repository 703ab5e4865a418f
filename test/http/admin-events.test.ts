import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway } from "../support/gateway.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";

const ADMIN = "admin-token-0123456789abcdef";
const SHOP_A = "token-of-shop-a-0123456789";
const SHOP_B = "token-of-shop-b-0123456789";
const admin = { authorization: `Bearer ${ADMIN}` };

const h = gatewayWithEmulator({ ADMIN_TOKEN: ADMIN, SENDER_TOKENS: `shop-a:${SHOP_A},shop-b:${SHOP_B}` });

const adminGet = (path: string) => call(`${h.gw.url}/integration/v1/admin${path}`, { headers: admin });

describe("GET /integration/v1/admin/events", () => {
  it("pages newest first with a cursor, without gaps or repeats", async () => {
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) {
      const event = orderPaidEvent();
      sent.push(event.event_id);
      await postEvent(h.gw.url, event, { authorization: `Bearer ${SHOP_A}` });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const query: string = `?sender=shop-a&limit=2${cursor === null ? "" : `&cursor=${cursor}`}`;
      const answer = await adminGet(`/events${query}`);
      expect(answer.status).toBe(200);
      const body = answer.json() as { events: Array<{ event_id: string; sender: string }>; next_cursor: string | null };
      seen.push(...body.events.map((e) => e.event_id));
      cursor = body.next_cursor;
      if (cursor === null) break;
    }
    const mine = seen.filter((id) => sent.includes(id));
    expect(mine).toEqual([...sent].reverse());
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("filters by status and refuses a bad query", async () => {
    const answer = await adminGet("/events?status=SUCCEEDED&limit=500");
    const events = (answer.json().events as Array<{ status: string }>) ?? [];
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.status === "SUCCEEDED")).toBe(true);
    expect((await adminGet("/events?status=DONE")).status).toBe(400);
    expect((await adminGet("/events?cursor=not-a-cursor")).status).toBe(400);
  });
});

describe("GET /integration/v1/admin/events/{event_id}", () => {
  it("shows everything about one event, attempts included", async () => {
    const event = orderPaidEvent();
    await postEvent(h.gw.url, event, { authorization: `Bearer ${SHOP_B}` });
    const answer = await adminGet(`/events/${event.event_id}`);
    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({
      sender: "shop-b",
      event_id: event.event_id,
      status: "SUCCEEDED",
      body: { event_id: event.event_id, order: { total: "1890.00" } },
      attempts: [{ attempt: 1, outcome: "delivered", http_status: 201 }],
      replays: [],
    });
  });

  it("answers 409 naming the senders when several used the id, and ?sender= picks one", async () => {
    const event = orderPaidEvent();
    await postEvent(h.gw.url, event, { authorization: `Bearer ${SHOP_A}` });
    await postEvent(h.gw.url, event, { authorization: `Bearer ${SHOP_B}` });
    const ambiguous = await adminGet(`/events/${event.event_id}`);
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.json()).toMatchObject({ type: "/integration/v1/problems/ambiguous-event-id" });
    expect(String(ambiguous.json().detail)).toMatch(/"shop-a".*"shop-b"/);
    expect((await adminGet(`/events/${event.event_id}?sender=shop-b`)).json()).toMatchObject({ sender: "shop-b" });

    const replay = await call(`${h.gw.url}/integration/v1/admin/events/${event.event_id}/replay?sender=shop-a`, {
      method: "POST",
      body: JSON.stringify({ reason: "check", force: true }),
      headers: { ...admin, "content-type": "application/json" },
    });
    expect([replay.status, replay.json().sender]).toEqual([202, "shop-a"]);
    expect((await adminGet(`/events/nope-${event.event_id}`)).status).toBe(404);
  });
});

describe("readiness", () => {
  it("answers /readyz 200 while the register is writable and 503 when it is not", async () => {
    const probe = await startTestGateway({ ONEC_URL: h.onec.url });
    try {
      expect((await call(`${probe.url}/readyz`)).status).toBe(200);
      await probe.gateway.register.close();
      const down = await call(`${probe.url}/readyz`);
      expect(down.status).toBe(503);
      expect(down.json()).toMatchObject({ type: "/integration/v1/problems/storage-unavailable" });
      expect((await call(`${probe.url}/healthz`)).status).toBe(200);
    } finally {
      await probe.close();
    }
  });
});
