import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { keptDelivery } from "../../src/accept/webhook-intake.ts";
import { type OrderPaidEvent, siteOrderKeys } from "../../src/domain/order-paid.ts";
import type { ReserveRequest } from "../../src/register/port.ts";
import type { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { shopifyAdapter } from "../../src/sources/shopify.ts";
import { SHOPIFY_SECRET, SHOPIFY_SHOP } from "../support/platforms/shopify.ts";
import { asWebhookDelivery, shopifyOrders, WEBHOOK_SENDER } from "./webhook-load.ts";

/**
 * `npm run bench:register`: what a new event costs the SQLite register alone,
 * in a register that already holds a realistic history, without HTTP around
 * it. A fresh file is filled with PREFILL events (default 300 000: a month of
 * a busy shop's orders, as retention keeps them), then EVENTS more (default
 * 20 000) are reserved 50 at once, as 50 concurrent requests make them. Prints
 * the process's CPU per event (main thread and writer thread together) and the
 * wall time per event, for each of ROUNDS fresh files. The bench's HTTP rows
 * start from an empty file, where each index's pages stay in cache; here they
 * do not.
 *
 * BENCH_AGAINST=<another checkout, built> runs that checkout's register too,
 * in alternating rounds: a schema's or a statement's cost, before against
 * after, on one machine at one time.
 *
 * BENCH_DELIVERIES=1 reserves the webhook scenario's events instead: new
 * Shopify orders as the adapter maps them, in alternating rounds alone and
 * each with its platform delivery kept for support as the gateway keeps it
 * (the payload as received and the platform's ids, in the same
 * transaction): what keeping the delivery costs. Each row also says how
 * many bytes the process wrote to storage per event (/proc/self/io: the
 * WAL, and the checkpoints that copy it into the file).
 */

const PREFILL = Number(process.env.PREFILL ?? 300_000);
const EVENTS = Number(process.env.EVENTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const AT_ONCE = 50;
const FILL_AT_ONCE = 500;

type RegisterClass = new (file: string) => SqliteRegister;

const example = JSON.parse(
  readFileSync(new URL("../../schemas/examples/order-paid.json", import.meta.url), "utf8"),
) as OrderPaidEvent;

/** A new order under a random event_id, as senders make them; sent with the keys a caller passes. */
function request(i: number): ReserveRequest {
  const id = randomUUID();
  const event = {
    ...example,
    event_id: `evt-${id}`,
    order: { ...example.order, id: `A-${id.slice(0, 8)}`, number: `${i}` },
  };
  return {
    sender: "shop-a",
    eventId: event.event_id,
    fingerprint: id,
    policyVersion: "bench",
    body: JSON.stringify(event),
    siteOrderId: event.order.id,
    siteOrderNumber: event.order.number,
    correlationId: randomUUID(),
    now: Date.now(),
  };
}

const settings = {
  sender: WEBHOOK_SENDER,
  platform: "shopify" as const,
  secrets: [SHOPIFY_SECRET],
  shopDomain: SHOPIFY_SHOP,
};
const nextOrder = shopifyOrders();

/**
 * A new Shopify order as the webhook records it: the adapter's event, with
 * the delivery kept by WebhookIntake's own keptDelivery.
 */
function platformRequest(withDelivery: boolean): ReserveRequest {
  const delivery = asWebhookDelivery(nextOrder());
  const reading = shopifyAdapter.read(delivery, settings);
  if (reading.kind !== "paid") throw new Error(`the bench's Shopify order reads as ${reading.kind}`);
  const correlationId = randomUUID();
  const event = {
    sender: WEBHOOK_SENDER,
    eventId: reading.event.event_id,
    fingerprint: reading.canonical.fingerprint,
    policyVersion: reading.canonical.policy,
    body: reading.canonical.text,
    ...siteOrderKeys(reading.event),
    correlationId,
    now: Date.now(),
  };
  if (!withDelivery) return event;
  return {
    ...event,
    source: keptDelivery(
      shopifyAdapter,
      settings,
      delivery,
      { key: reading.event.event_id, outcome: "accepted", reason: null, ids: reading.ids },
      correlationId,
    ),
  };
}

/** Bytes this process has caused to be written to storage (proc(5)), its writer thread's included. */
function bytesWritten(): number {
  const line = readFileSync("/proc/self/io", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("write_bytes:"));
  return Number(line?.split(":")[1] ?? Number.NaN);
}

async function reserveAll(register: SqliteRegister, requests: readonly ReserveRequest[], atOnce: number) {
  for (let i = 0; i < requests.length; i += atOnce) {
    await Promise.all(requests.slice(i, i + atOnce).map((r) => register.reserve(r)));
  }
}

type Kind = "events" | "Shopify orders" | "Shopify orders with deliveries";

async function round(tree: string, Register: RegisterClass, kind: Kind): Promise<string> {
  const next = kind === "events" ? request : () => platformRequest(kind === "Shopify orders with deliveries");
  const dir = mkdtempSync(join(tmpdir(), "bench-register-"));
  const register = new Register(join(dir, "register.db"));
  try {
    for (let filled = 0; filled < PREFILL; filled += 10_000) {
      const count = Math.min(10_000, PREFILL - filled);
      await reserveAll(
        register,
        Array.from({ length: count }, (_, i) => next(filled + i)),
        FILL_AT_ONCE,
      );
    }
    const measured = Array.from({ length: EVENTS }, (_, i) => next(PREFILL + i));
    const written = bytesWritten();
    const cpu = process.cpuUsage();
    const started = performance.now();
    await reserveAll(register, measured, AT_ONCE);
    const wallMs = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    const bytes = (bytesWritten() - written) / EVENTS;
    const perEvent = (micros: number) => (micros / EVENTS).toFixed(1).padStart(6);
    const what = `${tree}, ${kind}`;
    return `${what.padEnd(48)} CPU ${perEvent(user + system)} µs, wall ${perEvent(wallMs * 1000)} µs, ${(bytes / 1024).toFixed(1)} KiB written per event`;
  } finally {
    await register.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const trees: [string, RegisterClass][] = [];
const here = resolve(import.meta.dirname, "../..");
for (const root of [here, process.env.BENCH_AGAINST].filter((root) => root !== undefined)) {
  const module = (await import(join(resolve(root), "dist/register/sqlite/sqlite-register.js"))) as {
    SqliteRegister: RegisterClass;
  };
  trees.push([root === here ? "this checkout" : root, module.SqliteRegister]);
}
console.log(
  `SQLite register, ${EVENTS} new events reserved ${AT_ONCE} at once into a file holding ${PREFILL}; node ${process.version}`,
);
const kinds: Kind[] =
  process.env.BENCH_DELIVERIES === "1" ? ["Shopify orders", "Shopify orders with deliveries"] : ["events"];
for (let r = 1; r <= ROUNDS; r++) {
  for (const [tree, Register] of trees) {
    for (const kind of kinds) console.log(`  round ${r}  ${await round(tree, Register, kind)}`);
  }
}
