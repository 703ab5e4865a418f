import { describe, expect, it, vi } from "vitest";
import { gatewayWithEmulator } from "../support/harness.ts";
import { rawExchange, rawRequestBytes } from "../support/raw-http.ts";

/**
 * Tilda's webhook URL ends in the shop's secret, and README says it is
 * "logged as `<secret>`": on every path that logs a request's URL, the
 * refusals written before any route runs included (a malformed % escape, an
 * over-long segment, an Expect other than 100-continue, CONNECT).
 */

const SECRET = "TildaSecretValue0123456789";
const TILDA = "/integration/v1/webhooks/tilda/shop-a";

const h = gatewayWithEmulator({ RATE_LIMIT_MAX: "100000" });

interface Case {
  name: string;
  status: number;
  method: string;
  target: string;
  headers?: string[];
  /** The URL as the request's line must show it; `${TILDA}/<secret>` unless said. */
  logged?: string;
}

const CASES: ReadonlyArray<Case> = [
  { name: "a malformed % escape", status: 400, method: "POST", target: `${TILDA}/${SECRET}%zz` },
  {
    name: "a segment over the router's limit",
    status: 414,
    method: "POST",
    target: `${TILDA}/${SECRET}${"x".repeat(400)}`,
  },
  {
    name: "an Expect other than 100-continue",
    status: 417,
    method: "POST",
    target: `${TILDA}/${SECRET}`,
    headers: ["Expect: something-else", "Content-Type: application/json"],
  },
  { name: "CONNECT", status: 501, method: "CONNECT", target: `${TILDA}/${SECRET}` },
  // URLs pasted a little wrong, or opened in a browser: no route, yet the secret is in them.
  {
    name: "the secret pasted without the sender",
    status: 404,
    method: "GET",
    target: `/integration/v1/webhooks/tilda/${SECRET}`,
    logged: "/integration/v1/webhooks/tilda/<secret>",
  },
  {
    name: "a doubled slash after the host",
    status: 404,
    method: "GET",
    target: `/${TILDA}/${SECRET}`,
    logged: `/${TILDA}/<secret>`,
  },
  {
    name: "the path in other letter cases",
    status: 404,
    method: "GET",
    target: `/Integration/v1/Webhooks/Tilda/shop-a/${SECRET}`,
    logged: "/Integration/v1/Webhooks/Tilda/shop-a/<secret>",
  },
  { name: "a segment after the secret", status: 404, method: "GET", target: `${TILDA}/${SECRET}/again` },
  // The URL itself, opened in a browser: its route's 405 (it takes POST).
  {
    name: "a query after the secret",
    status: 405,
    method: "GET",
    target: `${TILDA}/${SECRET}?from=browser`,
    logged: `${TILDA}/<secret>?from=browser`,
  },
];

describe("the Tilda secret in the URL is never logged", () => {
  it.each(CASES)("$name ($status): the request's line has the URL with <secret>, no line has the secret", async (c) => {
    const correlationId = `url-secret-${c.status}-${c.name.replace(/[^A-Za-z0-9]+/g, "-")}`;
    const answer = await rawExchange(
      h.gw.url,
      rawRequestBytes({
        method: c.method,
        target: c.target,
        headers: [`X-Correlation-ID: ${correlationId}`, ...(c.headers ?? [])],
        ...(c.method === "POST" ? { body: "{}" } : {}),
      }),
    );
    expect(answer.status).toBe(c.status);
    const line = await vi.waitFor(() => {
      const found = h.gw.logs.find((l) => l.msg === "request completed" && l.correlation_id === correlationId);
      if (found === undefined) throw new Error("no request line yet");
      return found;
    });
    expect(line.status).toBe(c.status);
    expect(line.url).toBe(c.logged ?? `${TILDA}/<secret>`);
    for (const logged of h.gw.logs) expect(JSON.stringify(logged)).not.toContain(SECRET);
  });
});
