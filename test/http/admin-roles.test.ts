import { afterAll, describe, expect, it } from "vitest";
import type { OrderPaidEvent } from "../../src/domain/order-paid.ts";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway } from "../support/gateway.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, type HttpAnswer, postEvent } from "../support/http.ts";
import { ADMIN, OPERATOR, type TestOperator, VIEWER, writeOperatorsFile } from "../support/operators.ts";
import { tempDir } from "../support/temp.ts";

const ADMIN_TOKEN = "shared-admin-token-0123456789";
const SHOP_A = "token-of-shop-a-0123456789";
const SHOP_B = "token-of-shop-b-0123456789";
const EVENTS = "/integration/v1/admin/events";
/** RFC 9457 §3: a problem's media type. */
const PROBLEM_JSON = /^application\/problem\+json\b/;

const files = tempDir("gateway-roles-");
afterAll(() => files.remove());
const OPERATORS_FILE = writeOperatorsFile(files.path, [VIEWER, OPERATOR, ADMIN]);

const h = gatewayWithEmulator({
  OPERATORS_FILE,
  ADMIN_TOKEN,
  SENDER_TOKENS: `shop-a:${SHOP_A},shop-b:${SHOP_B}`,
  DELIVERY_POLL_MS: "50",
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const tokenOf = (who: TestOperator | string) => (typeof who === "string" ? who : who.token);

function adminGet(who: TestOperator | string, path: string): Promise<HttpAnswer> {
  return call(`${h.gw.url}${EVENTS}${path}`, { headers: bearer(tokenOf(who)) });
}

function replay(who: TestOperator | string, eventId: string, body: unknown, query = ""): Promise<HttpAnswer> {
  return call(`${h.gw.url}${EVENTS}/${eventId}/replay${query}`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { ...bearer(tokenOf(who)), "content-type": "application/json" },
  });
}

/** An event of `shopToken`'s that 1C refused for good (FAILED_FINAL), as support finds it. */
async function refusedEvent(shopToken = SHOP_A): Promise<OrderPaidEvent> {
  h.onec.setFaults({ knownSkus: ["TEA-001"] });
  try {
    const event = orderPaidEvent();
    expect((await postEvent(h.gw.url, event, bearer(shopToken))).status).toBe(422);
    return event;
  } finally {
    h.onec.setFaults({ knownSkus: null });
  }
}

function expectForbidden(answer: HttpAnswer): void {
  expect(answer.status).toBe(403);
  expect(answer.headers["content-type"]).toMatch(PROBLEM_JSON);
  expect(answer.json()).toMatchObject({
    type: "/integration/v1/problems/forbidden",
    status: 403,
    code: "GW_ERR_FORBIDDEN",
  });
}

describe("viewer (1C administrators)", () => {
  it("reads every sender's events: the list, and one event with its attempts and replays", async () => {
    const ofA = orderPaidEvent();
    const ofB = orderPaidEvent();
    expect((await postEvent(h.gw.url, ofA, bearer(SHOP_A))).status).toBe(201);
    expect((await postEvent(h.gw.url, ofB, bearer(SHOP_B))).status).toBe(201);

    const list = await adminGet(VIEWER, "?limit=500");
    expect(list.status).toBe(200);
    const listed = (list.json().events as Array<{ event_id: string; sender: string }>).map((e) => [
      e.sender,
      e.event_id,
    ]);
    expect(listed).toContainEqual(["shop-a", ofA.event_id]);
    expect(listed).toContainEqual(["shop-b", ofB.event_id]);

    const detail = await adminGet(VIEWER, `/${ofB.event_id}?sender=shop-b`);
    expect(detail.status).toBe(200);
    expect(detail.json()).toMatchObject({
      sender: "shop-b",
      event_id: ofB.event_id,
      status: "SUCCEEDED",
      attempts: [{ attempt: 1, outcome: "delivered", http_status: 201 }],
      replays: [],
    });
  });

  it("sees who replayed an event and why", async () => {
    const event = await refusedEvent();
    expect((await replay(OPERATOR, event.event_id, { reason: "MUG-010 added in 1C" })).status).toBe(202);
    await h.gw.gateway.deliverer.idle();
    const detail = (await adminGet(VIEWER, `/${event.event_id}`)).json();
    expect(detail.replays).toMatchObject([
      { requested_by: OPERATOR.name, reason: "MUG-010 added in 1C", from_status: "FAILED_FINAL" },
    ]);
  });

  it("gets the stored body with the customer's e-mail and phone masked; an operator gets them as sent", async () => {
    const event = orderPaidEvent();
    await postEvent(h.gw.url, event, bearer(SHOP_A));
    const { email, phone } = event.order.customer;
    expect(email).toBeDefined();
    expect(phone).toBeDefined();

    const seenByViewer = (await adminGet(VIEWER, `/${event.event_id}`)).json();
    expect(seenByViewer.body).toMatchObject({ event_id: event.event_id, order: { total: event.order.total } });
    expect(JSON.stringify(seenByViewer.body)).not.toContain(String(email));
    expect(JSON.stringify(seenByViewer.body)).not.toContain(String(phone));

    const seenByOperator = (await adminGet(OPERATOR, `/${event.event_id}`)).json();
    expect(seenByOperator.body).toEqual(event);
  });

  it("is refused a replay: 403 forbidden problem+json, and nothing is replayed", async () => {
    const event = await refusedEvent();
    const answer = await replay(VIEWER, event.event_id, { reason: "let me try" });
    expectForbidden(answer);
    expect(String(answer.json().detail)).toContain(VIEWER.name);
    // Refused before the body is looked at: a broken body is still 403, not 400.
    expectForbidden(await replay(VIEWER, event.event_id, { force: "yes" }));
    const detail = (await adminGet(VIEWER, `/${event.event_id}`)).json();
    expect(detail).toMatchObject({ status: "FAILED_FINAL", attempts: [{ outcome: "rejected" }], replays: [] });
  });

  it("cannot read a sender's own status URL: that stays the sender's", async () => {
    const event = orderPaidEvent();
    await postEvent(h.gw.url, event, bearer(SHOP_A));
    const statusUrl = `${h.gw.url}/integration/v1/orders/paid/${event.event_id}`;
    expect((await call(statusUrl, { headers: bearer(VIEWER.token) })).status).toBe(401);
    expect((await call(statusUrl, { headers: bearer(SHOP_A) })).status).toBe(200);
  });
});

describe("operator (support)", () => {
  it("replays an event, recorded under the operator's name, whatever requested_by the body claims", async () => {
    const event = await refusedEvent();
    const answer = await replay(OPERATOR, event.event_id, { reason: "SKU added", requested_by: ADMIN.name });
    expect(answer.status).toBe(202);
    expect(answer.json()).toMatchObject({ event_id: event.event_id, replayed_from: "FAILED_FINAL" });
    await h.gw.gateway.deliverer.idle();
    const detail = (await adminGet(OPERATOR, `/${event.event_id}`)).json();
    expect(detail.status).toBe("SUCCEEDED");
    expect(detail.replays).toMatchObject([{ requested_by: OPERATOR.name, reason: "SKU added" }]);
    expect(h.gw.logs).toContainEqual(
      expect.objectContaining({ msg: "event replayed", event_id: event.event_id, requested_by: OPERATOR.name }),
    );
  });

  it("still has to give a reason", async () => {
    const event = await refusedEvent();
    const answer = await replay(OPERATOR, event.event_id, {});
    expect(answer.status).toBe(400);
    expect(answer.headers["content-type"]).toMatch(PROBLEM_JSON);
    expect((await adminGet(OPERATOR, `/${event.event_id}`)).json().replays).toEqual([]);
  });
});

describe("admin", () => {
  it("from OPERATORS_FILE replays under their own name", async () => {
    const event = await refusedEvent(SHOP_B);
    expect((await replay(ADMIN, event.event_id, { reason: "checked" }, "?sender=shop-b")).status).toBe(202);
    await h.gw.gateway.deliverer.idle();
    expect((await adminGet(ADMIN, `/${event.event_id}`)).json().replays).toMatchObject([{ requested_by: ADMIN.name }]);
  });

  it("ADMIN_TOKEN is still an admin, recorded as admin", async () => {
    const event = await refusedEvent();
    expect((await adminGet(ADMIN_TOKEN, "?limit=1")).status).toBe(200);
    expect((await replay(ADMIN_TOKEN, event.event_id, { reason: "scripted" })).status).toBe(202);
    await h.gw.gateway.deliverer.idle();
    const detail = (await adminGet(ADMIN_TOKEN, `/${event.event_id}`)).json();
    expect(detail.replays).toMatchObject([{ requested_by: "admin", reason: "scripted" }]);
    expect(detail.body).toEqual(event);
  });
});

describe("who is not on the list", () => {
  it("a sender's token is 403 on every admin route", async () => {
    const event = orderPaidEvent();
    await postEvent(h.gw.url, event, bearer(SHOP_A));
    expectForbidden(await adminGet(SHOP_A, ""));
    expectForbidden(await adminGet(SHOP_A, `/${event.event_id}`));
    expectForbidden(await replay(SHOP_A, event.event_id, { reason: "mine" }));
  });

  it("no token is 401 with a bearer challenge (RFC 6750 §3), an unknown one 403", async () => {
    const none = await call(`${h.gw.url}${EVENTS}`);
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toMatch(/^Bearer\b/);
    expect(none.headers["content-type"]).toMatch(PROBLEM_JSON);
    expect(none.json()).toMatchObject({ type: "/integration/v1/problems/unauthorized", status: 401 });
    expectForbidden(await adminGet("nobody-has-this-token-0123456789", ""));
  });
});

describe("/openapi.json", () => {
  it("declares who may call each admin route, and its 401 and 403", async () => {
    const doc = (await call(`${h.gw.url}/openapi.json`)).json() as {
      paths: Record<string, Record<string, { security: Array<Record<string, string[]>>; responses: object }>>;
    };
    const expected = {
      [`get ${EVENTS}`]: ["viewer", "operator", "admin"],
      [`get ${EVENTS}/{event_id}`]: ["viewer", "operator", "admin"],
      [`post ${EVENTS}/{event_id}/replay`]: ["operator", "admin"],
    };
    for (const [where, roles] of Object.entries(expected)) {
      const [method = "", path = ""] = where.split(" ");
      const operation = doc.paths[path]?.[method];
      expect(operation?.security, where).toEqual([{ adminBearer: roles }]);
      expect(Object.keys(operation?.responses ?? {}), where).toEqual(expect.arrayContaining(["401", "403"]));
    }
  });
});

describe("admin routes with OPERATORS_FILE alone", () => {
  it("exist without ADMIN_TOKEN, and ADMIN_TOKEN's old value is then nobody's", async () => {
    const gw = await startTestGateway({ ONEC_URL: h.onec.url, OPERATORS_FILE });
    try {
      expect((await call(`${gw.url}${EVENTS}`, { headers: bearer(VIEWER.token) })).status).toBe(200);
      expectForbidden(await call(`${gw.url}${EVENTS}`, { headers: bearer(ADMIN_TOKEN) }));
    } finally {
      await gw.close();
    }
  });
});
