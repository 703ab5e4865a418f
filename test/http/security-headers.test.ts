import { afterAll, describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { gatewaysPerTest, type TestGateway } from "../support/gateway.ts";
import { call, type HttpAnswer, postEvent } from "../support/http.ts";
import { OPERATOR, writeOperatorsFile } from "../support/operators.ts";
import { rawExchange, rawRequestBytes } from "../support/raw-http.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Issue 22, security finding 10 (its header half): "There is no HSTS over
 * TLS, and JSON answers have no nosniff."
 *
 * RFC 6797 (HSTS): §7.2 "An HSTS Host MUST NOT include the STS header field in
 * HTTP responses conveyed over non-secure transport"; §6.1 the field is
 * `directive *( ";" directive )`, with exactly one `max-age=delta-seconds`
 * (§6.1.1). The gateway ends no TLS itself: a request came over TLS when a
 * proxy trusted with TRUST_PROXY says so in X-Forwarded-Proto.
 * X-Content-Type-Options: the Fetch standard's `nosniff`, on every answer.
 */
const SHOP_A = "token-of-shop-a-0123456789";
const files = tempDir("security-headers-");
afterAll(() => files.remove());
const OPERATORS_FILE = writeOperatorsFile(files.path, [OPERATOR]);

const gateway = gatewaysPerTest({
  OPERATORS_FILE,
  SENDER_TOKENS: `shop-a:${SHOP_A}`,
  ALLOW_ANONYMOUS: "false",
  ONEC_URL: "http://127.0.0.1:9/hs",
  DELIVERER: "off",
  SYNC_WAIT_MS: "0",
});

const bearer = { authorization: `Bearer ${SHOP_A}` };

/** One answer of each kind the gateway gives: JSON, problem+json from a hook, a handler, the router, HTML. */
async function answersOfEveryKind(gw: TestGateway, headers: Record<string, string>): Promise<[string, HttpAnswer][]> {
  const accepted = await postEvent(gw.url, orderPaidEvent(), { ...bearer, ...headers });
  return [
    ["202 JSON (an event recorded)", accepted],
    [
      "200 JSON (its status)",
      await call(`${gw.url}${accepted.headers.location}`, { headers: { ...bearer, ...headers } }),
    ],
    ["200 JSON (health)", await call(`${gw.url}/healthz`, { headers })],
    ["401 problem+json (no token)", await postEvent(gw.url, orderPaidEvent(), headers)],
    ["422 problem+json (a handler's refusal)", await postEvent(gw.url, { event_id: "x" }, { ...bearer, ...headers })],
    ["404 problem+json (no route)", await call(`${gw.url}/no-such-route`, { headers })],
    ["400 problem+json (the router's refusal)", await call(`${gw.url}/integration/v1/orders/paid/%zz`, { headers })],
    [
      "403 problem+json (admin, wrong token)",
      await call(`${gw.url}/integration/v1/admin/events`, {
        headers: { authorization: "Bearer wrong-token-0123456789abcdef", ...headers },
      }),
    ],
    ["200 HTML (console sign-in)", await call(`${gw.url}/console/sign-in`, { headers })],
    ["303 (console, signed out)", await call(`${gw.url}/console`, { headers })],
  ];
}

/** RFC 6797 §6.1: directives split on ";", names case-insensitive, max-age exactly once with delta-seconds. */
function maxAgeOf(value: string): number {
  const directives = value.split(";").map((directive) => directive.trim());
  const maxAges = directives.filter((directive) => /^max-age\s*=/i.test(directive));
  expect(maxAges).toHaveLength(1);
  const seconds = /^max-age\s*=\s*"?([0-9]+)"?$/i.exec(maxAges[0] as string)?.[1];
  expect(seconds).toBeDefined();
  for (const directive of directives) expect(directive).toMatch(/^(max-age\s*=\s*"?[0-9]+"?|includeSubDomains)$/i);
  return Number(seconds);
}

describe("X-Content-Type-Options: nosniff", () => {
  it("is on every answer, JSON and problem+json included", async () => {
    const gw = await gateway();
    for (const [what, answer] of await answersOfEveryKind(gw, {})) {
      expect(answer.headers["x-content-type-options"], what).toBe("nosniff");
    }
  });

  it("is on the answers Node's parser makes before Fastify sees a request (431, 400, 417)", async () => {
    const gw = await gateway();
    const raw = (headers: string[], target = "/healthz") =>
      rawExchange(gw.url, rawRequestBytes({ method: "GET", target, headers }));
    const answers = [
      await raw([`X-Padding: ${"a".repeat(17 * 1024)}`]),
      await raw(["Content-Length: 1", "Content-Length: 2"]),
      await raw(["Expect: something-else"]),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([431, 400, 417]);
    for (const answer of answers)
      expect(answer.headers["x-content-type-options"], String(answer.status)).toEqual(["nosniff"]);
  });
});

describe("Strict-Transport-Security (RFC 6797)", () => {
  it("is never sent over plain HTTP (§7.2)", async () => {
    const gw = await gateway();
    for (const [what, answer] of await answersOfEveryKind(gw, {})) {
      expect(answer.headers["strict-transport-security"], what).toBeUndefined();
    }
  });

  it("is not sent when a client that is no trusted proxy claims HTTPS in X-Forwarded-Proto", async () => {
    const gw = await gateway();
    for (const [what, answer] of await answersOfEveryKind(gw, { "x-forwarded-proto": "https" })) {
      expect(answer.headers["strict-transport-security"], what).toBeUndefined();
    }
  });

  it("is on every answer over TLS (a proxy trusted with TRUST_PROXY says X-Forwarded-Proto: https), with one max-age", async () => {
    const gw = await gateway({ TRUST_PROXY: "127.0.0.1" });
    for (const [what, answer] of await answersOfEveryKind(gw, { "x-forwarded-proto": "https" })) {
      expect(answer.headers["x-content-type-options"], what).toBe("nosniff");
      // Fastify builds the router's refusals on a request that does not know TRUST_PROXY, so it
      // cannot tell TLS there; RFC 6797 asks the policy on secure answers, not on each one (§5.1),
      // and a browser keeps it from every other answer.
      if (what.includes("the router's refusal")) continue;
      const value = answer.headers["strict-transport-security"];
      expect(value, what).toBeDefined();
      // A year, as browsers' preload rules and helmet's default ask; 0 would tell the browser to forget (§6.1.1).
      expect(maxAgeOf(value as string), what).toBeGreaterThanOrEqual(31_536_000);
    }
    // The same proxy forwarding plain HTTP: no HSTS.
    for (const [what, answer] of await answersOfEveryKind(gw, { "x-forwarded-proto": "http" })) {
      expect(answer.headers["strict-transport-security"], what).toBeUndefined();
    }
  });
});

describe("the console keeps its own headers", () => {
  it("its strict CSP and the rest, on pages and over TLS alike", async () => {
    const gw = await gateway({ TRUST_PROXY: "127.0.0.1" });
    for (const headers of [{}, { "x-forwarded-proto": "https" }] as Record<string, string>[]) {
      const page = await call(`${gw.url}/console/sign-in`, { headers });
      expect(page.headers["content-security-policy"]).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
      expect(page.headers["x-frame-options"]).toBe("DENY");
      expect(page.headers["referrer-policy"]).toBe("same-origin");
      expect(page.headers["cache-control"]).toBe("no-store");
    }
  });
});
