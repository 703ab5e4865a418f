import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { call } from "../support/http.ts";
import {
  SHOPIFY_SECRET,
  SHOPIFY_SHOP,
  shopifyBody,
  shopifyHeaders,
  shopifyOrder,
} from "../support/platforms/shopify.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";

/**
 * README, what every platform gets: 503 when "the register cannot record
 * now: Shopify and Tilda retry". The register is made unable to write the way
 * test/http/order-paid.test.ts does it (closed under the running gateway); a
 * signed Shopify delivery then gets 503 with Retry-After as a problem
 * document, and once storage is back (a gateway on the same SQLite file) the
 * delivery left no trace, and Shopify's retry is recorded as a new payment.
 */
const dir = tempDir();
const sourcesFile = writeSourcesFile(dir.path, [
  { sender: "shop-a", platform: "shopify", secrets: [SHOPIFY_SECRET], shop_domain: SHOPIFY_SHOP },
]);
const databasePath = join(dir.path, "gateway.db");

let onec: OnecEmulator | undefined;
const gateways: TestGateway[] = [];
beforeAll(async () => {
  onec = await startOnecEmulator();
});
afterAll(async () => {
  await Promise.all(gateways.map((gw) => gw.close()));
  await onec?.close();
  dir.remove();
});

async function startGateway(): Promise<TestGateway> {
  if (onec === undefined) throw new Error("the emulator starts in beforeAll");
  const gw = await startTestGateway({ ONEC_URL: onec.url, SOURCES_FILE: sourcesFile, DATABASE_URL: databasePath });
  gateways.push(gw);
  return gw;
}

const URL_PATH = "/integration/v1/webhooks/shopify/shop-a";

describe("a platform's delivery while the register cannot record", () => {
  it("answers 503 with Retry-After, records nothing, and records Shopify's retry once storage is back", async () => {
    const order = shopifyOrder({
      id: 940000000000000001n,
      admin_graphql_api_id: "gid://shopify/Order/940000000000000001",
    });
    const key = `shopify:${order.id}`;
    const body = shopifyBody(order);
    // One webhook id on every retry, as Shopify sends them.
    const headers = shopifyHeaders(body);

    const broken = await startGateway();
    await broken.gateway.register.close();
    const refused = await call(`${broken.url}${URL_PATH}`, { method: "POST", body, headers });
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toMatch(/^[1-9][0-9]*$/);
    expect(refused.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(refused.json()).toMatchObject({ type: "/integration/v1/problems/storage-unavailable", retryable: true });
    gateways.splice(gateways.indexOf(broken), 1);
    await broken.close();

    const back = await startGateway();
    expect(await back.gateway.register.find("shop-a", key)).toBeUndefined();
    expect((await back.gateway.register.sources.list({ limit: 1000 })).map((d) => d.key)).not.toContain(key);

    const retried = await call(`${back.url}${URL_PATH}`, { method: "POST", body, headers });
    expect([201, 202]).toContain(retried.status);
    expect(await back.gateway.register.find("shop-a", key)).toBeDefined();
  });
});
