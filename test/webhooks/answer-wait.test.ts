import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { gatewaysPerTest } from "../support/gateway.ts";
import { call, type HttpAnswer } from "../support/http.ts";
import {
  SHOPIFY_SECRET,
  SHOPIFY_SHOP,
  shopifyBody,
  shopifyHeaders,
  shopifyOrder,
} from "../support/platforms/shopify.ts";
import {
  formHeaders,
  minipressoPayment,
  nestedForm,
  TILDA_SECRET,
  tildaWebhookPath,
} from "../support/platforms/tilda.ts";
import { wooDelivery, wooOrder } from "../support/platforms/woocommerce.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";

/**
 * README, platform deliveries: "The wait for 1C is a fifth of the platform's
 * limit (1 s for Shopify and Tilda)", never longer than SYNC_WAIT_MS. 1C is
 * slowed to 4 s, longer than any wait here, so each delivery is answered when
 * its wait runs out: Shopify and Tilda (5 s limits) after 1 s even with
 * SYNC_WAIT_MS at 10 s; WooCommerce (a 60 s limit: 12 s) after SYNC_WAIT_MS,
 * 3 s here. Real HTTP on 127.0.0.1, payloads and signatures from
 * test/support/platforms/.
 */
const ONEC_LATENCY_MS = 4000;
/** The room a slow machine may need on top of the wait, well short of the next wait it could be confused with. */
const SLACK_MS = 800;

const WOO_SECRET = "wc_wait_secret_5f1d0c9a7b3e";
const dir = tempDir();
const sourcesFile = writeSourcesFile(dir.path, [
  { sender: "shop-s", platform: "shopify", secrets: [SHOPIFY_SECRET], shop_domain: SHOPIFY_SHOP },
  { sender: "shop-t", platform: "tilda", secrets: [TILDA_SECRET], currency: "RUB" },
  {
    sender: "shop-w",
    platform: "woocommerce",
    secrets: [WOO_SECRET],
    skus: { "product:93": "WOO-SINGLE-1", Bar3: "BAR3" },
  },
]);

let onec: OnecEmulator | undefined;
beforeAll(async () => {
  onec = await startOnecEmulator({ faults: { latencyMs: ONEC_LATENCY_MS } });
});
afterAll(async () => {
  await onec?.close();
  dir.remove();
});

// WooCommerce's example order was paid in 2017: a register that keeps events for a century still records it.
const gateway = gatewaysPerTest({ SOURCES_FILE: sourcesFile, RATE_LIMIT_MAX: "100000", RETENTION_HOURS: "876000" });

async function startGateway(syncWaitMs: number) {
  if (onec === undefined) throw new Error("the emulator starts in beforeAll");
  return gateway({ ONEC_URL: onec.url, SYNC_WAIT_MS: String(syncWaitMs) });
}

async function timed(send: () => Promise<HttpAnswer>): Promise<{ answer: HttpAnswer; elapsed: number }> {
  const started = performance.now();
  const answer = await send();
  return { answer, elapsed: performance.now() - started };
}

describe("how long a platform's delivery waits for a slow 1C", () => {
  it("answers Shopify after a fifth of its 5 s, however long SYNC_WAIT_MS is", async () => {
    const gw = await startGateway(10_000);
    const body = shopifyBody(
      shopifyOrder({ id: 930000000000000001n, admin_graphql_api_id: "gid://shopify/Order/930000000000000001" }),
    );
    const { answer, elapsed } = await timed(() =>
      call(`${gw.url}/integration/v1/webhooks/shopify/shop-s`, { method: "POST", body, headers: shopifyHeaders(body) }),
    );
    expect(answer.status).toBe(202);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(1000 + SLACK_MS);
  });

  it("answers Tilda after a fifth of its 5 s, however long SYNC_WAIT_MS is", async () => {
    const gw = await startGateway(10_000);
    const payment = minipressoPayment({
      orderid: "2190000001",
      products: [{ name: "Minipresso GR", quantity: "1", amount: "4500", price: "4500", sku: "WAC-MP-GR" }],
      amount: "4500",
    });
    const { answer, elapsed } = await timed(() =>
      call(`${gw.url}${tildaWebhookPath("shop-t")}`, {
        method: "POST",
        body: nestedForm(payment),
        headers: formHeaders(),
      }),
    );
    // Tilda gets "ok" for everything recorded; the event is still in delivery.
    expect([answer.status, answer.text]).toEqual([200, "ok"]);
    expect((await gw.gateway.register.find("shop-t", `tilda:${payment.orderid}`))?.status).toBe("PROCESSING");
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(1000 + SLACK_MS);
  });

  it("answers WooCommerce after SYNC_WAIT_MS when that is under a fifth of its 60 s", async () => {
    const gw = await startGateway(3000);
    const { body, headers } = wooDelivery(wooOrder({ id: 9001, number: "9001" }), { secret: WOO_SECRET });
    const { answer, elapsed } = await timed(() =>
      call(`${gw.url}/integration/v1/webhooks/woocommerce/shop-w`, {
        method: "POST",
        body: body.toString("utf8"),
        headers,
      }),
    );
    expect(answer.status).toBe(202);
    expect(elapsed).toBeGreaterThanOrEqual(2900);
    expect(elapsed).toBeLessThan(3000 + SLACK_MS);
  });
});
