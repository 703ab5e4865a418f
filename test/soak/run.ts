import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onecIdempotencyKey } from "../../src/delivery/attempt-delivery.ts";
import { readJournal } from "../../src/onec-emulator/journal.ts";
import { stopAll } from "../bench/processes.ts";
import { type FaultDone, playFaults } from "./chaos.ts";
import { ShopClient } from "./client.ts";
import { planCluster, SENDER, scrubGatewaySettings } from "./cluster.ts";
import { resendAll, statusViews } from "./collect.ts";
import { createSoakRegister, type SoakRegister } from "./database.ts";
import { drained } from "./drain.ts";
import { soakEvents } from "./events.ts";
import { ShopHttp } from "./http.ts";
import { onecOrders } from "./onec-control.ts";
import { parseOptions, type SoakOptions, USAGE, UsageError } from "./options.ts";
import { Prng } from "./prng.ts";
import { openRegisterReader } from "./register-readers.ts";
import { failures, printFaults, printFindings, printHeader } from "./report.ts";
import { type FaultMix, faultSchedule, type OnecWindow } from "./schedule.ts";
import { type Findings, verify } from "./verify.ts";

/**
 * `[DATABASE_URL=postgres://…] npm run soak [-- --quick] [--seed N] [--events N] [--keep] [--postgres [URL]]`:
 * a bounded chaos run of the whole system as real processes (two gateways on
 * one register, a SQLite file or a fresh PostgreSQL database, the 1C emulator
 * with its journal, a retrying shop), then a comparison of every account of
 * every event. Exit 0 only if nothing was duplicated, lost, stuck or
 * misreported, and every resend is a byte-identical 200. See docs/operations.md, "Soak".
 */

const WORKERS = 16;
/** The gateway's default SYNC_WAIT_MS: a request unanswered 5 s after it is a defect, not a slow 1C. */
const SYNC_WAIT_MS = 2_000;
const REQUEST_TIMEOUT_MS = SYNC_WAIT_MS + 5_000;
const RETRY_AFTER_CAP_MS = 5_000;
const DOUBLE_SEND_SHARE = 0.25;
/** A flash sale's size: its requests (twice this) are what makes many requests wait on another process at once. */
const BURST_EVENTS = 200;

let options: SoakOptions;
try {
  // Before the scrub: DATABASE_URL=postgres://… is how a run is asked for on PostgreSQL.
  options = parseOptions(process.argv.slice(2), process.env);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(`${error.message}\n${USAGE}`);
  process.exit(2);
}
scrubGatewaySettings(process.env);

const dir = mkdtempSync(join(tmpdir(), "gateway-soak-"));
let soakRegister: SoakRegister | undefined;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void stopAll().finally(exitInterrupted));
}

let passed = false;
try {
  soakRegister = await createSoakRegister(dir, options.postgres);
  const outcome = await soak(options, dir, soakRegister);
  // Printed after every process has stopped, so the wall time is the whole run's.
  printFindings(outcome.findings, { drainMs: outcome.drainMs, wallMs: performance.now() });
  console.log(`restarts: ${outcome.restarts}`);
  passed = failures(outcome.findings).length === 0;
} catch (error) {
  console.error(`soak could not run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  await stopAll();
  if (passed && !options.keep) {
    rmSync(dir, { recursive: true, force: true });
    await removeRegister(soakRegister);
  } else {
    printKept();
  }
}
console.log(passed ? "soak passed" : "soak FAILED");
process.exitCode = passed ? 0 : 1;

function exitInterrupted(): never {
  printKept();
  process.exit(130);
}

function printKept(): void {
  if (soakRegister !== undefined) console.log(`register kept in ${soakRegister.description}`);
  console.log(`journal and every process's log kept in ${dir}`);
}

/** A database left behind is only litter, not a reason to fail a run that passed. */
async function removeRegister(created: SoakRegister | undefined): Promise<void> {
  try {
    await created?.remove();
  } catch (error) {
    console.error(
      `could not remove ${created?.description}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

interface SoakOutcome {
  readonly findings: Findings;
  /** From the end of the last fault to an empty backlog; undefined if it never emptied. */
  readonly drainMs: number | undefined;
  readonly restarts: string;
}

async function soak(options: SoakOptions, dir: string, soakRegister: SoakRegister): Promise<SoakOutcome> {
  const prng = new Prng(options.seed);
  const mix = faultMix(options.quick);
  const burstTotal = mix.bursts.reduce((sum, n) => sum + n, 0);
  const events = soakEvents(options.events + burstTotal, options.seed, prng.fork());
  const steady = events.slice(0, options.events);
  const burstEvents = events.slice(options.events);
  const schedule = faultSchedule(prng.fork(), options.faultWindowMs, mix);
  const cluster = await planCluster(dir, soakRegister.location);
  const { onec, gateways } = cluster;
  const gatewayUrls = gateways.map((g) => g.url);
  printHeader(options, cluster.gatewayEnvs, soakRegister.description);

  await onec.start();
  await Promise.all(gateways.map((g) => g.start()));
  // After the gateways: they create the register and its schema.
  const register = openRegisterReader(soakRegister.location);
  const http = new ShopHttp(cluster.token, REQUEST_TIMEOUT_MS);
  const stopShop = new AbortController();
  try {
    const shop = new ShopClient(http, {
      workers: WORKERS,
      gateways: gatewayUrls,
      intervalMs: options.faultWindowMs / options.events,
      retryAfterCapMs: RETRY_AFTER_CAP_MS,
      doubleSendShare: DOUBLE_SEND_SHARE,
    });
    const loadStartedAt = performance.now();
    const traffic = [shop.run(steady, prng.fork(), stopShop.signal)];
    const startBurst = (count: number): void => {
      traffic.push(shop.burst(burstEvents.splice(0, count), prng.fork(), stopShop.signal));
    };
    const done = await playFaults(schedule, { onec, gateways, startBurst }, loadStartedAt);
    printFaults(done);

    // Every burst has started by now.
    const shopDone = Promise.all(traffic).then(() => {});
    const lastFaultAt = loadStartedAt + lastFaultMs(done);
    const drainedAt = await drained(shopDone, register, SENDER, lastFaultAt + options.drainLimitMs);
    stopShop.abort();
    await shopDone;

    const findings = verify({
      ledgers: shop.ledgers,
      register: await register.rows(SENDER),
      journal: readJournal(cluster.journal).orders,
      onecOrders: await onecOrders(onec.url),
      statusViews: await statusViews(http, gatewayUrls, events),
      // Last: these POSTs must find every event finished.
      resends: await resendAll(http, gatewayUrls, events),
      onecKey: (eventId) => onecIdempotencyKey(SENDER, eventId),
    });
    return {
      findings,
      drainMs: drainedAt === undefined ? undefined : drainedAt - lastFaultAt,
      restarts: [...gateways, onec].map((p) => `${p.name} ${p.kills}`).join(", "),
    };
  } finally {
    // Also when a fault failed to play: senders still retrying would keep the process alive.
    stopShop.abort();
    await register.close();
    await http.close();
    await Promise.all(gateways.map((g) => g.stop()));
    await onec.stop();
  }
}

/**
 * Quick: each kind of 1C fault once (the hang inside the crash loop), 3 gateway kills, one burst.
 * Default: three rounds of each 1C fault and the crash loop, 12 gateway kills, two bursts.
 */
function faultMix(quick: boolean): FaultMix {
  if (quick) {
    return { onecWindows: ["outage", "latency", "kill", "crash_loop"], gatewayKills: 3, bursts: [BURST_EVENTS] };
  }
  const round: OnecWindow[] = ["outage", "latency", "hang", "kill"];
  return {
    onecWindows: [...round, ...round, ...round, "crash_loop"],
    gatewayKills: 12,
    bursts: [BURST_EVENTS, BURST_EVENTS],
  };
}

/** When the last fault was over (the last restart listening, the last fault cleared), from the load's start. */
function lastFaultMs(done: readonly FaultDone[]): number {
  return Math.max(0, ...done.map((d) => d.doneMs));
}
