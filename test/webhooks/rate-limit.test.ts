import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call } from "../support/http.ts";
import { SHOPIFY_SECRET, shopifyBody, shopifyHeaders, shopifyOrder } from "../support/platforms/shopify.ts";
import { tempDir } from "../support/temp.ts";

const dir = tempDir();
afterAll(() => dir.remove());
const sourcesFile = join(dir.path, "sources.json");
writeFileSync(
  sourcesFile,
  JSON.stringify({ sources: [{ sender: "shop-r", platform: "shopify", secrets: [SHOPIFY_SECRET] }] }),
);

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
});
