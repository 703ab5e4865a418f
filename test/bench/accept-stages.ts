import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { admitOrderPaid } from "../../src/accept/admit-order-paid.ts";
import { bodyDigest, KnownBodies } from "../../src/accept/known-bodies.ts";
import { OrderPaidAcceptor } from "../../src/accept/order-paid-acceptor.ts";
import { checkBusinessRules } from "../../src/domain/business-rules.ts";
import { EventStatus } from "../../src/domain/event-status.ts";
import { canonicalizeEvent } from "../../src/domain/fingerprint.ts";
import { successSnapshot } from "../../src/domain/first-answer.ts";
import { type OrderPaidEvent, siteOrderKeys } from "../../src/domain/order-paid.ts";
import { parseStrictJson } from "../../src/domain/strict-json.ts";
import { checkOrderPaidSchema } from "../../src/domain/validate-order-paid.ts";
import { answerFor } from "../../src/http/answers.ts";
import { RequestLog } from "../../src/http/request-log.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import type { SourceSettings, WebhookDelivery } from "../../src/sources/port.ts";
import { shopifyAdapter } from "../../src/sources/shopify.ts";
import { SHOPIFY_SECRET, SHOPIFY_SHOP } from "../support/platforms/shopify.ts";
import { siteOrderOf } from "../support/records.ts";
import { tempDir } from "../support/temp.ts";
import { asWebhookDelivery, shopifyOrders, WEBHOOK_SENDER } from "./webhook-load.ts";

/**
 * The accept path's per-request stages, each timed alone in this process:
 * where a replay's (and a new event's) CPU goes outside Fastify and the
 * socket. Prints µs per call, the median of STAGES_RUNS runs (default 7) of
 * STAGES_CALLS calls (default 20 000) each, so a busy machine's spikes weigh
 * little; STAGES_ONLY (a regular expression) picks stages by name. Compare
 * two trees by running it in each:
 *   node --import tsx test/bench/accept-stages.ts
 */

const runs = Number(process.env.STAGES_RUNS ?? 7);
const calls = Number(process.env.STAGES_CALLS ?? 20_000);
const only = new RegExp(process.env.STAGES_ONLY ?? "");
const EVENTS = 1000;

const example = JSON.parse(
  readFileSync(new URL("../../schemas/examples/order-paid.json", import.meta.url), "utf8"),
) as OrderPaidEvent;
const texts = Array.from({ length: EVENTS }, (_, i) => JSON.stringify({ ...example, event_id: `stage-${i}` }));
const buffers = texts.map((text) => Buffer.from(text));
const utf8 = new TextDecoder("utf-8", { fatal: true });
const parsed = texts.map((text) => {
  const result = parseStrictJson(text);
  if (!result.ok) throw new Error(result.message);
  return result.value;
});
const events = parsed.map((value) => {
  const check = checkOrderPaidSchema(value);
  if (!check.ok) throw new Error(JSON.stringify(check.errors));
  return check.event;
});
const canonicals = events.map((event) => canonicalizeEvent(event));
/** The webhook scenario's deliveries (test/bench/webhook-load.ts): new Shopify orders, signed, as they reach the adapter. */
const nextShopifyOrder = shopifyOrders();
const shopify: WebhookDelivery[] = Array.from({ length: EVENTS }, () => asWebhookDelivery(nextShopifyOrder()));
const shopifySettings: SourceSettings = {
  sender: WEBHOOK_SENDER,
  platform: "shopify",
  secrets: [SHOPIFY_SECRET],
  shopDomain: SHOPIFY_SHOP,
};
const shopifyEvents = shopify.map((delivery) => {
  const reading = shopifyAdapter.read(delivery, shopifySettings);
  if (reading.kind !== "paid") throw new Error(`the bench's Shopify order reads as ${reading.kind}`);
  return reading.event;
});
/** Every event here is the example's order under another event_id. */
const siteOrder = siteOrderKeys(example);

const dir = tempDir("accept-stages-");
const register = new SqliteRegister(join(dir.path, "stages.db"));
const now = Date.now();
for (let i = 0; i < EVENTS; i++) {
  const canonical = canonicals[i];
  if (canonical === undefined) continue;
  const eventId = `stage-${i}`;
  await register.reserve({
    sender: "bench",
    eventId,
    fingerprint: canonical.fingerprint,
    policyVersion: canonical.policy,
    body: canonical.text,
    ...siteOrderOf(canonical.text),
    correlationId: `corr-${i}`,
    now,
  });
  const [claim] = await register.claim({
    owner: "w",
    now,
    leaseMs: 1000,
    limit: 1,
    only: { sender: "bench", eventId },
  });
  if (claim === undefined) throw new Error("not claimed");
  const order = { id: `order-${i}`, number: `ORD-${i}` };
  await register.settle(
    claim.lease,
    { status: EventStatus.SUCCEEDED, order, response: successSnapshot(eventId, order) },
    { startedAt: now, durationMs: 1, outcome: "delivered", httpStatus: 201 },
    now,
  );
}
const records = await Promise.all(events.map((event) => register.find("bench", event.event_id)));
const acceptor = new OrderPaidAcceptor(register, { syncWaitMs: 0, now: Date.now });
const root = createLogger("info", new Writable({ write: (_chunk, _encoding, done) => done() }));
const logger = root.child({ correlation_id: "shop-42" });
const requestLog = new RequestLog();
/** What requestCompleted reads of a request and its reply; the reply's logger made per request, as Fastify does. */
function completed(i: number): void {
  const id = `corr-${i}`;
  const request = {
    id,
    method: "POST",
    url: "/integration/v1/orders/paid",
    sender: "bench",
    logEvent: { eventId: `stage-${i % EVENTS}`, eventStatus: "SUCCEEDED" },
    server: { log: root },
  } as unknown as FastifyRequest;
  const reply = {
    statusCode: 200,
    elapsedTime: 1.234,
    log: root.child({ correlation_id: id }),
  } as unknown as FastifyReply;
  requestLog.requestCompleted(null, request, reply);
}

/** Full, as after the first 10 000 new events; the digests cycle through three times its capacity, each new to it. */
const known = new KnownBodies<number>();
const digests = Array.from({ length: 30_000 }, (_, i) => bodyDigest(Buffer.from(`body-${i}`)));
for (const digest of digests) known.remember(digest, 0);

/** `per` calls of the stage made by one run(i), all at once (as concurrent requests make them): the time is per call. */
type Stage = [name: string, run: (i: number) => unknown, per?: number];
const CONCURRENT = 50;
const stages: Stage[] = [
  ["utf8 decode", (i) => utf8.decode(buffers[i % EVENTS])],
  ["parseStrictJson", (i) => parseStrictJson(texts[i % EVENTS] as string)],
  ["SHA-256 of the bytes", (i) => bodyDigest(buffers[i % EVENTS] as Buffer)],
  ["remember a new body", (i) => known.remember(digests[i % digests.length] as string, i)],
  ["schema (Ajv)", (i) => checkOrderPaidSchema(parsed[i % EVENTS])],
  ["business rules", (i) => checkBusinessRules(events[i % EVENTS] as OrderPaidEvent)],
  ["canonicalize + SHA-256", (i) => canonicalizeEvent(events[i % EVENTS])],
  ["Shopify verify (HMAC)", (i) => shopifyAdapter.verify(shopify[i % EVENTS] as WebhookDelivery, shopifySettings)],
  ["Shopify read, map, admit", (i) => shopifyAdapter.read(shopify[i % EVENTS] as WebhookDelivery, shopifySettings)],
  ["canonicalize, keys sorted", (i) => canonicalizeEvent(shopifyEvents[i % EVENTS])],
  ["admitOrderPaid (all)", (i) => admitOrderPaid(parsed[i % EVENTS], undefined)],
  ["register.find", (i) => register.find("bench", `stage-${i % EVENTS}`)],
  [
    `register.find ×${CONCURRENT} at once`,
    (i) =>
      Promise.all(
        Array.from({ length: CONCURRENT }, (_, j) => register.find("bench", `stage-${(i * CONCURRENT + j) % EVENTS}`)),
      ),
    CONCURRENT,
  ],
  [
    "acceptor.accept (replay)",
    (i) =>
      acceptor.accept({
        sender: "bench",
        eventId: `stage-${i % EVENTS}`,
        canonical: canonicals[i % EVENTS] as (typeof canonicals)[number],
        siteOrder,
        correlationId: "c",
      }),
  ],
  [
    `acceptor.accept (new) ×${CONCURRENT} at once`,
    (i) =>
      Promise.all(
        Array.from({ length: CONCURRENT }, (_, j) =>
          acceptor.accept({
            sender: "bench",
            eventId: `new-${process.pid}-${i}-${j}`,
            canonical: canonicals[j] as (typeof canonicals)[number],
            siteOrder,
            correlationId: "c",
          }),
        ),
      ),
    CONCURRENT,
  ],
  [
    "answerFor",
    (i) => {
      const record = records[i % EVENTS];
      return record === undefined ? undefined : answerFor({ kind: "event", record, firstAnswer: false }, "c", now);
    },
  ],
  [
    "request log line",
    (i) =>
      logger.info(
        {
          method: "POST",
          url: "/integration/v1/orders/paid",
          status: 200,
          duration_ms: 1.2,
          sender: "bench",
          event_id: `stage-${i % EVENTS}`,
          event_status: "SUCCEEDED",
        },
        "request completed",
      ),
  ],
  ["RequestLog line (+ child)", completed],
];

console.log(`node ${process.version}; µs per call, median of ${runs} runs × ${calls} calls`);
for (const [name, run, per = 1] of stages.filter(([name]) => only.test(name))) {
  const perCall: number[] = [];
  for (let r = 0; r <= runs; r++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls / per; i++) {
      const value = run(i);
      if (value instanceof Promise) await value;
    }
    const micros = Number(process.hrtime.bigint() - started) / 1000 / calls;
    if (r > 0) perCall.push(micros); // the first run warms the JIT up
  }
  perCall.sort((a, b) => a - b);
  console.log(`  ${name.padEnd(26)} ${(perCall[Math.floor(perCall.length / 2)] ?? Number.NaN).toFixed(2).padStart(7)}`);
}
await register.close();
dir.remove();
