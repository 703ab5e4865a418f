import { afterAll, describe, expect, it } from "vitest";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call } from "../support/http.ts";
import { SHOPIFY_SECRET, shopifyBody, shopifyHeaders, shopifyOrder } from "../support/platforms/shopify.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";

/**
 * A platform's payload is not a sender's event: Shopify's REST order carries
 * some 2 KB per line item, so a large paid order is well over BODY_LIMIT
 * (256 KiB). Refused with 413, it would be lost: Shopify retries the same
 * bytes and then removes the subscription. WEBHOOK_BODY_LIMIT (2 MiB by
 * default) bounds the webhooks instead.
 */

const dir = tempDir();
afterAll(() => dir.remove());
const sourcesFile = writeSourcesFile(dir.path, [
  { sender: "shop-big", platform: "shopify", secrets: [SHOPIFY_SECRET] },
]);

const byDefault = gatewayWithEmulator({ SOURCES_FILE: sourcesFile });
const limited = gatewayWithEmulator({ SOURCES_FILE: sourcesFile, WEBHOOK_BODY_LIMIT: String(200 * 1024) });

/** A paid order whose payload is about 300 KB: the order of the fixture, and a long note (Shopify keeps the buyer's note). */
function largeOrder(id: bigint): string {
  const body = shopifyBody({ ...shopifyOrder({ id, admin_graphql_api_id: `gid://shopify/Order/${id}` }) });
  const withNote = `${body.slice(0, -1)},"note":${JSON.stringify("n".repeat(300 * 1024))}}`;
  expect(Buffer.byteLength(withNote)).toBeGreaterThan(300 * 1024);
  return withNote;
}

const post = (url: string, body: string) =>
  call(`${url}/integration/v1/webhooks/shopify/shop-big`, { method: "POST", body, headers: shopifyHeaders(body) });

describe("a platform's webhook body over BODY_LIMIT", () => {
  it("is accepted up to WEBHOOK_BODY_LIMIT (2 MiB by default), and its order recorded", async () => {
    const answer = await post(byDefault.gw.url, largeOrder(720000000000000001n));
    expect(answer.status).toBeLessThan(300);
    expect(await byDefault.gw.gateway.register.find("shop-big", "shopify:720000000000000001")).toBeDefined();
  });

  it("is 413 over WEBHOOK_BODY_LIMIT, nothing recorded", async () => {
    const answer = await post(limited.gw.url, largeOrder(720000000000000002n));
    expect(answer.status).toBe(413);
    // The limit named is the webhook's (WEBHOOK_BODY_LIMIT), not the native endpoint's BODY_LIMIT.
    expect(answer.json()).toMatchObject({ detail: expect.stringContaining(`limit of ${200 * 1024} bytes`) });
    expect(await limited.gw.gateway.register.find("shop-big", "shopify:720000000000000002")).toBeUndefined();
  });
});
