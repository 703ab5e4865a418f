import { shopifyAdapter } from "../src/sources/shopify.ts";
import { readPlatformJson } from "../src/sources/platform-json.ts";
import { shopifyOrderEvent, objectOf, shopifyId } from "../src/sources/shopify-order.ts";
import { admitOrderPaid } from "../src/accept/admit-order-paid.ts";
import { OrderPaidIntake } from "../src/accept/order-paid-intake.ts";
import { shopifyOrders } from "../test/bench/webhook-load.ts";
import { SHOPIFY_SECRET, SHOPIFY_SHOP } from "../test/support/platforms/shopify.ts";
import { readFileSync } from "node:fs";
import { hash } from "node:crypto";

const next = shopifyOrders();
const N = 5000;
const deliveries = Array.from({ length: N }, () => {
  const d = next();
  const headers = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { headers, raw: Buffer.from(d.body), receivedAt: Date.now() };
});
console.log("body bytes", deliveries[0]!.raw.length);
const settings = { sender: "s", platform: "shopify" as const, secrets: [SHOPIFY_SECRET], shopDomain: SHOPIFY_SHOP };
const example = JSON.parse(readFileSync("schemas/examples/order-paid.json", "utf8"));
const native = Array.from({ length: N }, (_, i) => Buffer.from(JSON.stringify({ ...example, event_id: `e-${i}` })));
console.log("native bytes", native[0]!.length);

function time(name: string, f: (i: number) => unknown) {
  const results: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < N; i++) f(i);
    results.push(Number(process.hrtime.bigint() - t) / 1000 / N);
  }
  results.sort((a, b) => a - b);
  console.log(name.padEnd(30), results[3]!.toFixed(2), "µs");
}
const parsedOrders = deliveries.map((d) => objectOf((readPlatformJson(d.raw) as { value: unknown }).value)!);
time("verify (hmac)", (i) => shopifyAdapter.verify(deliveries[i]!, settings));
time("readPlatformJson", (i) => readPlatformJson(deliveries[i]!.raw));
time("map shopifyOrderEvent", (i) => { const o = parsedOrders[i]!; const id = shopifyId(o, "Order")!; return shopifyOrderEvent(o, id, `shopify:${id}`, settings); });
const mapped = parsedOrders.map((o) => { const id = shopifyId(o, "Order")!; return shopifyOrderEvent(o, id, `shopify:${id}`, settings); });
time("admitOrderPaid (mapped)", (i) => admitOrderPaid(mapped[i]!, undefined));
time("read (all)", (i) => shopifyAdapter.read(deliveries[i]!, settings));
time("sha256 raw", (i) => hash("sha256", deliveries[i]!.raw));
const intake = new OrderPaidIntake({} as never);
time("native intake.admit", (i) => intake.admit(native[i]!, undefined));
