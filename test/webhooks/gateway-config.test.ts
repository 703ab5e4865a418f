import { afterAll, describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";
import { SHOPIFY_SECRET, shopifyBody, shopifyHeaders, shopifyOrder } from "../support/platforms/shopify.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";

const dir = tempDir();
afterAll(() => dir.remove());
const sourcesFile = writeSourcesFile(dir.path, [{ sender: "shop-p", platform: "shopify", secrets: [SHOPIFY_SECRET] }]);

/** A shop that only pastes a platform URL: no sender tokens, and anonymous traffic not allowed. */
const h = gatewayWithEmulator({ SOURCES_FILE: sourcesFile, ALLOW_ANONYMOUS: "false" });

async function samples(): Promise<Map<string, number>> {
  const answer = await call(`${h.gw.url}/metrics`);
  expect(answer.status).toBe(200);
  const found = new Map<string, number>();
  for (const line of answer.text.split("\n")) {
    if (line.startsWith("gateway_webhook_deliveries_total{"))
      found.set(line.slice(0, line.lastIndexOf(" ")), Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return found;
}

const series = (outcome: string, sender = "shop-p") =>
  `gateway_webhook_deliveries_total{platform="shopify",sender="${sender}",outcome="${outcome}"}`;

describe("a gateway configured with platform webhooks only", () => {
  it("starts, and keeps the senders' endpoint closed: a request without a token is 401, nothing recorded", async () => {
    const event = orderPaidEvent();
    const answer = await postEvent(h.gw.url, event);
    expect(answer.status).toBe(401);
    expect(await h.gw.gateway.register.find("default", event.event_id)).toBeUndefined();
  });

  it("shows each configured platform's outcomes at 0 before the first delivery, then counts them", async () => {
    const before = await samples();
    // rate() and increase() see a series from its first sample: one born at 1 would hide the first delivery.
    for (const outcome of ["accepted", "repeated", "ignored", "unmapped", "unauthorized", "malformed"]) {
      expect(before.get(series(outcome)), outcome).toBe(0);
    }
    const body = shopifyBody(shopifyOrder());
    const headers = shopifyHeaders(body);
    const url = `${h.gw.url}/integration/v1/webhooks/shopify/shop-p`;
    expect((await call(url, { method: "POST", body, headers })).status).toBeLessThan(300);
    expect((await call(url, { method: "POST", body, headers })).status).toBe(200);
    const wrong = shopifyHeaders(body, { secret: "someone-elses-secret-0" });
    expect((await call(url, { method: "POST", body, headers: wrong })).status).toBe(401);
    const after = await samples();
    expect(after.get(series("accepted"))).toBe(1);
    expect(after.get(series("repeated"))).toBe(1);
    expect(after.get(series("unauthorized"))).toBe(1);
  });

  it("refuses a sender that is not configured as it refuses a wrong signature", async () => {
    const body = shopifyBody(shopifyOrder());
    const answer = await call(`${h.gw.url}/integration/v1/webhooks/shopify/shop-unknown`, {
      method: "POST",
      body,
      headers: shopifyHeaders(body),
    });
    expect(answer.status).toBe(401);
    expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/webhook-signature" });
    expect(answer.headers["x-correlation-id"]).toBeTruthy();
    // Anyone can write any sender into a URL: they all count as "-", never one series each.
    const counted = [...(await samples()).keys()];
    expect(counted).toContain(series("unauthorized", "-"));
    expect(counted.join("\n")).not.toContain("shop-unknown");
  });

  it("never logs the secret at the end of a Tilda URL, even when the URL is opened in a browser", async () => {
    const secret = "tilda-secret-in-a-url-7f3a9c";
    const opened = await call(`${h.gw.url}/integration/v1/webhooks/tilda/shop-p/${secret}?from=browser`);
    expect(opened.status).toBe(405);
    const posted = await call(`${h.gw.url}/integration/v1/webhooks/tilda/shop-p/${secret}`, {
      method: "POST",
      body: "test=test",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(posted.status).toBe(401);
    const lines = h.gw.logs.filter((line) => String(line.url).startsWith("/integration/v1/webhooks/tilda/"));
    expect(lines.map((line) => line.url)).toEqual([
      "/integration/v1/webhooks/tilda/shop-p/<secret>?from=browser",
      "/integration/v1/webhooks/tilda/shop-p/<secret>",
    ]);
    expect(JSON.stringify(h.gw.logs)).not.toContain(secret);
  });
});
