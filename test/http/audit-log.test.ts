import { afterAll, describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { gatewaysPerTest, type TestGateway } from "../support/gateway.ts";
import { call, postEvent } from "../support/http.ts";
import { ADMIN, OPERATOR, writeOperatorsFile } from "../support/operators.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Issue 22, security finding 9: "No log line carries the client address.
 * Failed sign-ins and wrong admin tokens are not logged as such, and admin
 * reads are not logged against the person." What to build: "Audit log lines
 * carry the person and the address." Read from the gateway's real pino output.
 */
const SHOP_A = "token-of-shop-a-0123456789";
const EVENTS = "/integration/v1/admin/events";
const WRONG = "wrong-token-that-must-never-be-logged-0123456789";

const files = tempDir("audit-log-");
afterAll(() => files.remove());
const OPERATORS_FILE = writeOperatorsFile(files.path, [OPERATOR, ADMIN]);

const gateway = gatewaysPerTest({
  OPERATORS_FILE,
  SENDER_TOKENS: `shop-a:${SHOP_A}`,
  ALLOW_ANONYMOUS: "false",
  ONEC_URL: "http://127.0.0.1:9/hs",
  DELIVERER: "off",
  SYNC_WAIT_MS: "0",
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
type Line = Record<string, unknown>;

/** The request's one "request completed" line, found by the correlation id its answer carried. */
function requestLine(gw: TestGateway, correlationId: string | undefined): Line {
  const line = gw.logs.find((entry) => entry.msg === "request completed" && entry.correlation_id === correlationId);
  if (line === undefined) throw new Error(`no request line for ${correlationId}`);
  return line;
}

function authFailures(gw: TestGateway, correlationId: string | undefined): Line[] {
  return gw.logs.filter(
    (entry) => entry.correlation_id === correlationId && String(entry.msg).startsWith("authentication failed"),
  );
}

function expectNoTokenIn(gw: TestGateway): void {
  const text = JSON.stringify(gw.logs);
  for (const token of [WRONG, ADMIN.token, OPERATOR.token, SHOP_A]) expect(text).not.toContain(token);
}

describe("the request line", () => {
  it("carries the client address on every request", async () => {
    const gw = await gateway();
    const answer = await call(`${gw.url}/healthz`);
    expect(requestLine(gw, answer.headers["x-correlation-id"])).toMatchObject({ client_ip: "127.0.0.1", status: 200 });
  });

  it("behind TRUST_PROXY, carries the address the proxy saw (the right-most untrusted X-Forwarded-For entry)", async () => {
    const gw = await gateway({ TRUST_PROXY: "127.0.0.1" });
    const answer = await call(`${gw.url}/healthz`, { headers: { "x-forwarded-for": "198.51.100.1, 203.0.113.7" } });
    expect(requestLine(gw, answer.headers["x-correlation-id"])).toMatchObject({ client_ip: "203.0.113.7" });
  });
});

describe("failed authentication is logged as such, with the address and never the token", () => {
  it("a wrong admin token", async () => {
    const gw = await gateway();
    const answer = await call(`${gw.url}${EVENTS}`, { headers: bearer(WRONG) });
    expect(answer.status).toBe(403);
    const [line, ...more] = authFailures(gw, answer.headers["x-correlation-id"]);
    expect(more).toEqual([]);
    expect(line).toMatchObject({ level: 40, auth: "admin", client_ip: "127.0.0.1" });
    expectNoTokenIn(gw);
  });

  it("a wrong sender token", async () => {
    const gw = await gateway();
    const answer = await postEvent(gw.url, orderPaidEvent(), bearer(WRONG));
    expect(answer.status).toBe(401);
    expect(authFailures(gw, answer.headers["x-correlation-id"])).toEqual([
      expect.objectContaining({ level: 40, auth: "sender", client_ip: "127.0.0.1" }),
    ]);
    expectNoTokenIn(gw);
  });

  it("a failed sign-in", async () => {
    const gw = await gateway();
    const form = await call(`${gw.url}/console/sign-in`);
    const cookie = form.headers["set-cookie"]?.split(";")[0] ?? "";
    const csrf = /name="csrf" value="([^"]*)"/.exec(form.text)?.[1] ?? "";
    const answer = await call(`${gw.url}/console/sign-in`, {
      method: "POST",
      body: new URLSearchParams({ csrf, token: WRONG }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    });
    expect(answer.status).toBe(401);
    expect(authFailures(gw, answer.headers["x-correlation-id"])).toEqual([
      expect.objectContaining({ level: 40, auth: "console", client_ip: "127.0.0.1" }),
    ]);
    expectNoTokenIn(gw);
  });
});

describe("admin reads are logged against the person and the address", () => {
  it("the admin API's GET routes", async () => {
    const gw = await gateway();
    const list = await call(`${gw.url}${EVENTS}`, { headers: bearer(ADMIN.token) });
    expect(list.status).toBe(200);
    expect(requestLine(gw, list.headers["x-correlation-id"])).toMatchObject({
      method: "GET",
      operator: ADMIN.name,
      client_ip: "127.0.0.1",
    });
    const one = await call(`${gw.url}${EVENTS}/no-such-event`, { headers: bearer(OPERATOR.token) });
    expect(one.status).toBe(404);
    expect(requestLine(gw, one.headers["x-correlation-id"])).toMatchObject({
      operator: OPERATOR.name,
      client_ip: "127.0.0.1",
    });
    expectNoTokenIn(gw);
  });

  it("the console's pages", async () => {
    const gw = await gateway({ TRUST_PROXY: "127.0.0.1" });
    const via = { "x-forwarded-for": "203.0.113.9" };
    const form = await call(`${gw.url}/console/sign-in`, { headers: via });
    const signInCookie = form.headers["set-cookie"]?.split(";")[0] ?? "";
    const csrf = /name="csrf" value="([^"]*)"/.exec(form.text)?.[1] ?? "";
    const signedIn = await call(`${gw.url}/console/sign-in`, {
      method: "POST",
      body: new URLSearchParams({ csrf, token: OPERATOR.token }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: signInCookie, ...via },
    });
    expect(signedIn.status).toBe(303);
    const session = /(?:^|, )(gateway_console=[^;]+)/.exec(signedIn.headers["set-cookie"] ?? "")?.[1] ?? "";
    const page = await call(`${gw.url}/console`, { headers: { cookie: session, ...via } });
    expect(page.status).toBe(200);
    expect(requestLine(gw, page.headers["x-correlation-id"])).toMatchObject({
      method: "GET",
      url: "/console",
      operator: OPERATOR.name,
      client_ip: "203.0.113.9",
    });
  });
});
