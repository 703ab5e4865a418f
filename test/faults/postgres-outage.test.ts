import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import postgres from "postgres";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onecIdempotencyKey } from "../../src/delivery/attempt-delivery.ts";
import type { OrderPaidEvent } from "../../src/domain/order-paid.ts";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { createTestDatabase, PG_REQUIRED, PG_SERVER_URL, type TestDatabase } from "../support/postgres.ts";

/**
 * Issue 25, part 1: PostgreSQL stopped for 5 s under load, and separately
 * restarted. A gateway (a child process, on the sources) on a fresh
 * database, the 1C emulator, and 20 shop clients each sending its events one
 * after another and resending the same bytes after any non-2xx, as a shop
 * does. Every request must be answered within ANSWER_BOUND_MS (never a
 * hang), the first 2xx must come within RECOVERY_BOUND_MS of the server
 * accepting connections again, and every acknowledged event must reach 1C
 * exactly once.
 *
 * It stops the server, so it runs alone (`npm run test:faults`, after the
 * other tests in .ci/run), never in `npm test`. The cluster is
 * PG_FAULT_CLUSTER ("<version> <name>"), by default the machine's one "main"
 * cluster, which must serve PG_TEST_URL.
 */

const CLIENTS = 20;
/** Every refusal (any non-2xx): the database's loss must be answered, not waited out. */
const ANSWER_BOUND_MS = 1500;
/**
 * The gateway's default SYNC_WAIT_MS. A request whose event was recorded
 * waits up to this long for 1C's outcome, then answers 202 (201 if the
 * delivery came first): by design, also while the deliverer cannot write
 * the outcome. Its bound is this wait plus the register's answer.
 */
const SYNC_WAIT_MS = 2000;
const ACCEPTED_BOUND_MS = SYNC_WAIT_MS + 500;
const RECOVERY_BOUND_MS = 1000;
const OUTAGE_MS = 5000;
/** Longer than any bound: a request still open by then is a hang. */
const CLIENT_PATIENCE_MS = 15_000;
const RESEND_PAUSE_MS = 50;
const SENDER = "fault-shop";
const TOKEN = "fault-shop-token-0123456789abcdef";
const ORDERS_PAID = "/integration/v1/orders/paid";
const repoRoot = new URL("../../", import.meta.url).pathname;

/** The cluster to stop: PG_FAULT_CLUSTER, or the one version's "main" as .ci/run starts it. */
function faultCluster(): [version: string, name: string] {
  const configured = process.env.PG_FAULT_CLUSTER?.trim().split(/\s+/);
  if (configured?.length === 2) return configured as [string, string];
  const versions = readdirSync("/etc/postgresql");
  if (versions.length !== 1) throw new Error(`set PG_FAULT_CLUSTER: clusters of ${versions.join(", ")}`);
  return [versions[0] as string, "main"];
}

/** Asynchronous: the shop keeps sending while the server stops and starts. */
async function pgCtl(action: "start" | "stop" | "restart"): Promise<void> {
  const [version, name] = faultCluster();
  const mode = action === "start" ? [] : ["-m", "fast"];
  await promisify(execFile)("pg_ctlcluster", ["--skip-systemctl-redirect", version, name, action, ...mode]);
}

/**
 * The first moment a new connection runs a statement, polled every 10 ms from
 * now; with `downFirst`, the first after one that failed (a restart begun now).
 */
async function acceptingAt(url: string, downFirst = false, giveUpMs = 60_000): Promise<number> {
  const until = Date.now() + giveUpMs;
  let seenDown = !downFirst;
  while (Date.now() < until) {
    // No type fetch on connect: postgres.js leaves that query's rejection unhandled when a restart resets
    // the connection under it (vitest caught one in a .ci/run of the fault tests), and SELECT 1 needs no types.
    const sql = postgres(url, { max: 1, connect_timeout: 1, fetch_types: false, onnotice: () => {} });
    try {
      await sql`SELECT 1`;
      if (seenDown) return Date.now();
    } catch {
      seenDown = true;
    } finally {
      await sql.end({ timeout: 0 });
    }
    await sleep(10);
  }
  throw new Error("PostgreSQL did not come back");
}

interface Sent {
  eventId: string;
  startedAt: number;
  endedAt: number;
  /** HTTP status, or 0 for no answer (connection error or patience ran out). */
  status: number;
  retryAfter: string | undefined;
  problem: string | undefined;
}

/** Valid events from the schema's example, each its own order. */
function events(count: number): { eventId: string; orderId: string; bytes: Buffer }[] {
  const example = JSON.parse(
    readFileSync(new URL("../../schemas/examples/order-paid.json", import.meta.url), "utf8"),
  ) as OrderPaidEvent;
  return Array.from({ length: count }, (_, i) => {
    const event = structuredClone(example);
    event.event_id = `fault-${process.pid}-${i + 1}`;
    event.order.id = `F-${process.pid}-${i + 1}`;
    event.order.number = String(500_000 + i);
    event.payment.id = `fault-pay-${process.pid}-${i + 1}`;
    return { eventId: event.event_id, orderId: event.order.id, bytes: Buffer.from(JSON.stringify(event)) };
  });
}

/** The gateway on the sources (not dist/: the build may be behind them), ready once it listens. */
async function startGateway(env: Record<string, string>): Promise<{ url: string; child: ChildProcess; log: string[] }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: repoRoot,
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log: string[] = [];
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => log.push(line));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left behind: a gateway that never said it listens may still be starting.
      child.kill("SIGKILL");
      reject(new Error(`gateway did not start:\n${log.join("\n")}`));
    }, 30_000);
    lines.on("line", (line) => {
      log.push(line);
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`gateway exited with ${code}:\n${log.join("\n")}`)));
  });
  return { url, child, log };
}

/** The shop: `CLIENTS` senders, each taking the next event and resending it until a 2xx. */
class Shop {
  readonly sent: Sent[] = [];
  readonly acknowledged = new Set<string>();
  readonly #agent = new Agent({ headersTimeout: CLIENT_PATIENCE_MS, bodyTimeout: CLIENT_PATIENCE_MS });
  readonly #queue: { eventId: string; bytes: Buffer }[];
  #stopping = false;
  #running: Promise<void>[] = [];
  readonly #gateway: string;

  constructor(gateway: string, queue: { eventId: string; bytes: Buffer }[]) {
    this.#gateway = gateway;
    this.#queue = [...queue];
  }

  start(): void {
    this.#running = Array.from({ length: CLIENTS }, () => this.#client());
  }

  /** Events no client has taken yet. */
  get unsent(): number {
    return this.#queue.length;
  }

  /** No new events; each client still resends its current one until acknowledged. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#running);
    await this.#agent.close();
  }

  async #client(): Promise<void> {
    for (;;) {
      if (this.#stopping) return;
      const event = this.#queue.shift();
      if (event === undefined) return;
      for (;;) {
        const answer = await this.#post(event.eventId, event.bytes);
        this.sent.push(answer);
        if (answer.status >= 200 && answer.status < 300) {
          this.acknowledged.add(event.eventId);
          break;
        }
        await sleep(RESEND_PAUSE_MS);
      }
    }
  }

  async #post(eventId: string, bytes: Buffer): Promise<Sent> {
    const startedAt = Date.now();
    try {
      const response = await request(`${this.#gateway}${ORDERS_PAID}`, {
        method: "POST",
        body: bytes,
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
        dispatcher: this.#agent,
      });
      const body = await response.body.text();
      const retryAfter = response.headers["retry-after"];
      const problem =
        response.statusCode >= 400 ? ((JSON.parse(body) as { detail?: string }).detail ?? body) : undefined;
      return {
        eventId,
        startedAt,
        endedAt: Date.now(),
        status: response.statusCode,
        retryAfter: typeof retryAfter === "string" ? retryAfter : undefined,
        problem,
      };
    } catch (error) {
      return {
        eventId,
        startedAt,
        endedAt: Date.now(),
        status: 0,
        retryAfter: undefined,
        problem: String((error as { code?: unknown }).code ?? error),
      };
    }
  }
}

interface Outage {
  name: string;
  faultAt: number;
  acceptingAt: number;
}

/** What the shop saw around one outage. */
function figures(shop: Shop, outage: Outage, next: number) {
  // Up to the next fault: a request still open when it begins is that fault's.
  const during = shop.sent.filter((s) => s.startedAt >= outage.faultAt && s.endedAt < next);
  // Of requests sent once the server accepted again: one that reserved before the outage and waited
  // through it for 1C's outcome says nothing of recovery.
  const firstSuccess = during
    .filter((s) => s.status >= 200 && s.status < 300 && s.startedAt >= outage.acceptingAt)
    .reduce((first, s) => Math.min(first, s.endedAt), Number.POSITIVE_INFINITY);
  const durations = during.map((s) => s.endedAt - s.startedAt).sort((a, b) => a - b);
  const refused = during.filter((s) => s.status === 503);
  const stale = during.filter((s) => s.startedAt > firstSuccess && (s.status < 200 || s.status >= 300));
  return {
    outage: outage.name,
    requests: during.length,
    refused503: refused.length,
    refusedWithoutRetryAfter: refused.filter((s) => s.retryAfter === undefined).length,
    otherFailures: during.filter((s) => s.status !== 503 && (s.status < 200 || s.status >= 300)).length,
    p50AnswerMs: durations[Math.floor(durations.length / 2)] ?? 0,
    maxAnswerMs: durations.at(-1) ?? 0,
    maxRefusalMs: during
      .filter((s) => s.status < 200 || s.status >= 300)
      .reduce((max, s) => Math.max(max, s.endedAt - s.startedAt), 0),
    answered202: during.filter((s) => s.status === 202).length,
    downMs: outage.acceptingAt - outage.faultAt,
    recoveryMs: firstSuccess - outage.acceptingAt,
    /** Non-2xx answers begun after the first success past recovery: stale errors. */
    staleErrors: stale.length,
    firstStale: stale
      .slice(0, 3)
      .map((s) => ({ status: s.status, afterAcceptingMs: s.startedAt - outage.acceptingAt, problem: s.problem })),
  };
}

/** A machine with a cluster to stop; under PG_REQUIRED=1 (CI) its absence fails the test instead. */
const runnable = PG_REQUIRED || existsSync("/etc/postgresql");

describe.skipIf(!runnable)("PostgreSQL outage under 20 retrying clients", () => {
  let db: TestDatabase;
  let onec: OnecEmulator;
  let gateway: Awaited<ReturnType<typeof startGateway>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    onec = await startOnecEmulator();
    gateway = await startGateway({
      DATABASE_URL: db.url,
      ONEC_URL: onec.url,
      SENDER_TOKENS: `${SENDER}:${TOKEN}`,
      RATE_LIMIT_MAX: "1000000",
      ONEC_TIMEOUT_MS: "1500",
      SYNC_WAIT_MS: String(SYNC_WAIT_MS),
    });
  }, 60_000);

  afterAll(async () => {
    // The gateway first: nothing below may leave it running.
    if (gateway !== undefined && gateway.child.exitCode === null) {
      const exited = once(gateway.child, "exit");
      gateway.child.kill("SIGTERM");
      const timer = setTimeout(() => gateway.child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await onec?.close();
    // Whatever happened, the server is left running for whatever comes next.
    await pgCtl("start").catch(() => {}); // "already running"
    await acceptingAt(PG_SERVER_URL);
    await db?.drop();
  }, 60_000);

  it("answers every request within the bound, recovers within a second, loses and doubles nothing", async () => {
    // More than the run can take: the shop must still be sending when the second fault comes (4 000 ran
    // out before it once the gateway got faster, and an outage nobody sends through proves nothing).
    const all = events(20_000);
    const shop = new Shop(gateway.url, all);
    shop.start();
    await sleep(1500);

    const stopAt = Date.now();
    await pgCtl("stop");
    await sleep(OUTAGE_MS);
    const accepting = acceptingAt(PG_SERVER_URL);
    await pgCtl("start");
    const stopped: Outage = { name: "stopped 5 s", faultAt: stopAt, acceptingAt: await accepting };
    await sleep(3000);

    const restartAt = Date.now();
    const back = acceptingAt(PG_SERVER_URL, true);
    await pgCtl("restart");
    const restarted: Outage = { name: "restarted", faultAt: restartAt, acceptingAt: await back };
    await sleep(3000);
    const endAt = Date.now();
    const unsent = shop.unsent;
    await shop.stop();

    // Every acknowledged event reaches 1C, under the key the gateway gives it; the deliverer's polling
    // finds those recorded around the outage. 1C books each key once: a double is a second key per order.
    const acknowledged = [...shop.acknowledged].map((id) => onecIdempotencyKey(SENDER, id));
    const drainUntil = Date.now() + 30_000;
    const inOnec = () => new Set(onec.orders().map((o) => o.key));
    while (acknowledged.some((key) => !inOnec().has(key)) && Date.now() < drainUntil) await sleep(200);

    const counts = new Map<string, number>();
    const orderOf = new Map(all.map((e) => [onecIdempotencyKey(SENDER, e.eventId), e.orderId]));
    for (const booked of onec.orders()) {
      const order = orderOf.get(booked.key) ?? booked.key;
      counts.set(order, (counts.get(order) ?? 0) + 1);
    }
    const lost = acknowledged.filter((key) => !counts.has(orderOf.get(key) ?? key));
    const doubled = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    const unanswered = shop.sent.filter((s) => s.status === 0);
    const slowest = (answers: Sent[]) => answers.reduce((max, s) => Math.max(max, s.endedAt - s.startedAt), 0);
    const accepted = (s: Sent) => s.status >= 200 && s.status < 300;
    const report = [figures(shop, stopped, restartAt), figures(shop, restarted, endAt)];
    // The worker's account: one line when the register is lost and one when it is back, not one per step.
    const said = (message: string) => gateway.log.filter((line) => line.includes(`"msg":"${message}`)).length;
    const workerLines = { lost: said("register unavailable"), back: said("register available again") };

    console.log(
      JSON.stringify(
        {
          requests: shop.sent.length,
          acknowledged: acknowledged.length,
          lost: lost.length,
          doubled: doubled.length,
          unanswered: unanswered.length,
          slowestRefusalMs: slowest(shop.sent.filter((s) => !accepted(s))),
          slowestAcceptedMs: slowest(shop.sent.filter(accepted)),
          slowest: [...shop.sent]
            .sort((a, b) => b.endedAt - b.startedAt - (a.endedAt - a.startedAt))
            .slice(0, 3)
            .map((s) => ({ status: s.status, ms: s.endedAt - s.startedAt, problem: s.problem })),
          outages: report,
          workerLines,
          // The gateway's own account (warnings and errors but the per-request 503 lines), for a failed run.
          gatewayLog: gateway.log
            .filter((line) => /"level":(40|50|60)/.test(line) && !line.includes('"msg":"request failed"'))
            .slice(0, 8),
        },
        null,
        2,
      ),
    );

    expect(unsent, "the shop ran out of events before the run ended").toBeGreaterThan(0);
    expect(lost).toEqual([]);
    expect(doubled).toEqual([]);
    expect(unanswered.map((s) => s.problem)).toEqual([]);
    expect(slowest(shop.sent.filter((s) => !accepted(s)))).toBeLessThanOrEqual(ANSWER_BOUND_MS);
    expect(slowest(shop.sent.filter(accepted))).toBeLessThanOrEqual(ACCEPTED_BOUND_MS);
    expect(workerLines.lost).toBeGreaterThanOrEqual(report.length);
    expect(workerLines.lost).toBeLessThanOrEqual(2 * report.length);
    expect(workerLines.back).toBe(workerLines.lost);
    // Five seconds without a server are refused (503 with Retry-After). A restart can be over within a
    // request's deadline (258 ms once, on a fast disk): its requests then wait it out and none is refused;
    // the worker's lines above show it was seen.
    expect(report[0]?.refused503, stopped.name).toBeGreaterThan(0);
    for (const outage of report) {
      expect(outage.refusedWithoutRetryAfter, outage.outage).toBe(0);
      expect(outage.otherFailures, outage.outage).toBe(0);
      expect(outage.recoveryMs, outage.outage).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
      expect(outage.staleErrors, outage.outage).toBe(0);
    }
  }, 120_000);
});
