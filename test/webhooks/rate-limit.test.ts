import { afterAll, describe, expect, it } from "vitest";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call } from "../support/http.ts";
import { SHOPIFY_SECRET, shopifyBody, shopifyHeaders, shopifyOrder } from "../support/platforms/shopify.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";

const dir = tempDir();
afterAll(() => dir.remove());
const sourcesFile = writeSourcesFile(dir.path, [
  { sender: "shop-r", platform: "shopify", secrets: [SHOPIFY_SECRET] },
  { sender: "shop-f", platform: "shopify", secrets: [SHOPIFY_SECRET] },
]);

const h = gatewayWithEmulator({ SOURCES_FILE: sourcesFile, RATE_LIMIT_MAX: "3", RATE_LIMIT_WINDOW_MS: "60000" });

describe("a platform's webhook under the sender's rate limit", () => {
  it("answers 429 with Retry-After past RATE_LIMIT_MAX, and records nothing for it", async () => {
    const orders = Array.from({ length: 4 }, (_, index) =>
      shopifyOrder({
        id: 700000000000000000n + BigInt(index),
        admin_graphql_api_id: `gid://shopify/Order/${700000000000000000n + BigInt(index)}`,
      }),
    );
    const answers = [];
    for (const order of orders) {
      const body = shopifyBody(order);
      answers.push(
        await call(`${h.gw.url}/integration/v1/webhooks/shopify/shop-r`, {
          method: "POST",
          body,
          headers: shopifyHeaders(body),
        }),
      );
    }
    expect(answers.map((answer) => answer.status < 300)).toEqual([true, true, true, false]);
    const limited = answers[3];
    expect(limited?.status).toBe(429);
    expect(limited?.headers["retry-after"]).toMatch(/^[0-9]+$/);
    expect(limited?.json()).toMatchObject({ type: "/integration/v1/problems/rate-limited" });
    expect(await h.gw.gateway.register.find("shop-r", "shopify:700000000000000003")).toBeUndefined();
  });

  it("does not count deliveries whose signature fails: anyone may post to the URL, only the platform spends its budget", async () => {
    const url = `${h.gw.url}/integration/v1/webhooks/shopify/shop-f`;
    const forged = shopifyBody(shopifyOrder({ id: 710000000000000000n }));
    // More forgeries than the whole budget (3), from one client address.
    for (let i = 0; i < 5; i++) {
      const answer = await call(url, {
        method: "POST",
        body: forged,
        headers: shopifyHeaders(forged, { secret: "not-the-shops-secret" }),
      });
      expect(answer.status).toBe(401);
    }
    const order = shopifyOrder({
      id: 710000000000000001n,
      admin_graphql_api_id: "gid://shopify/Order/710000000000000001",
    });
    const body = shopifyBody(order);
    const real = await call(url, { method: "POST", body, headers: shopifyHeaders(body) });
    expect(real.status).toBeLessThan(300);
    expect(await h.gw.gateway.register.find("shop-f", "shopify:710000000000000001")).toBeDefined();
  });
});
