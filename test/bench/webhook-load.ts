import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { WebhookDelivery } from "../../src/sources/port.ts";
import {
  SHOPIFY_SECRET,
  SHOPIFY_SHOP,
  shopifyBody,
  shopifyHeaders,
  shopifyOrder,
} from "../support/platforms/shopify.ts";
import type { Delivery, Requests } from "./load.ts";

/**
 * The webhook scenario's requests: Shopify `orders/paid` deliveries as
 * Shopify sends them (test/support/platforms/shopify.ts: the documented
 * payload, every header, the HMAC over the body), each a new order under a
 * new webhook id, for one configured Shopify sender.
 */

export const WEBHOOK_SENDER = "bench-shop";
export const SHOPIFY_PATH = `/integration/v1/webhooks/shopify/${WEBHOOK_SENDER}`;

/** Writes the gateways' SOURCES_FILE: the one Shopify sender, its app secret and its shop. */
export function writeSourcesFile(dir: string): string {
  const path = join(dir, "bench-sources.json");
  const source = { sender: WEBHOOK_SENDER, platform: "shopify", secrets: [SHOPIFY_SECRET], shop_domain: SHOPIFY_SHOP };
  writeFileSync(path, JSON.stringify({ sources: [source] }));
  return path;
}

/** Outside any id the example holds; cut out of the body so each order is a concatenation. */
const ID_MARK = 987654321987654321n;

/**
 * Deliveries of the documented order, each under a new order id (the key the
 * gateway deduplicates on: admin_graphql_api_id) and a new webhook id,
 * signed. Ids past 2^53, as Shopify's are.
 */
export function shopifyOrders(): () => Delivery {
  const parts = shopifyBody(
    shopifyOrder({ id: ID_MARK, admin_graphql_api_id: `gid://shopify/Order/${ID_MARK}` }),
  ).split(String(ID_MARK));
  if (parts.length !== 3) throw new Error("cannot template the Shopify order");
  let id = BigInt(Date.now()) * 1_000_000n;
  return () => {
    const body = parts.join(String(++id));
    return { body, headers: shopifyHeaders(body) };
  };
}

/** A delivery as the gateway hands it to the adapter: header names in lower case, as Node gives them, and the raw bytes. */
export function asWebhookDelivery({ body, headers }: Delivery): WebhookDelivery {
  const lower = Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  return { headers: lower, raw: Buffer.from(body), receivedAt: Date.now() };
}

/** A first run's guess of the rate, before any run has measured one. */
const FIRST_GUESS_PER_SECOND = 5000;
/** Deliveries built beyond the fastest run's rate: on a shared machine a quieter spell sends half again as many, or more. */
const HEADROOM = 2;

/** New deliveries built ahead of each run, and how many had to be built during one (the pool ran out). */
export interface PrebuiltDeliveries extends Requests {
  readonly builtDuringLoad: () => number;
}

/**
 * Requests that take `build`'s deliveries from a pool filled before each run
 * (`prepare`), so that building and signing them is not in the load
 * generator's time: twice as many as the fastest run so far sent per second,
 * for the run's length. Should a run still empty it, the rest are built as
 * they go, and counted.
 */
export function prebuilt(build: () => Delivery, path: string, expectedStatus: number): PrebuiltDeliveries {
  const pool: Delivery[] = [];
  let sent = 0;
  let lastSeconds = 0;
  let fastest = 0;
  let late = 0;
  return {
    path,
    expectedStatus,
    prepare(durationSeconds) {
      if (lastSeconds > 0) fastest = Math.max(fastest, sent / lastSeconds);
      sent = 0;
      lastSeconds = durationSeconds;
      const wanted = Math.ceil((fastest || FIRST_GUESS_PER_SECOND) * durationSeconds * HEADROOM);
      while (pool.length < wanted) pool.push(build());
    },
    nextBody() {
      sent++;
      const next = pool.pop();
      if (next !== undefined) return next;
      late++;
      return build();
    },
    builtDuringLoad: () => late,
  };
}
