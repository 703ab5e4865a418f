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
import { drained } from "./drain.ts";
import { soakEvents } from "./events.ts";
import { ShopHttp } from "./http.ts";
import { onecOrders } from "./onec-control.ts";
import { parseOptions, type SoakOptions, USAGE, UsageError } from "./options.ts";
import { Prng } from "./prng.ts";
import { RegisterReader } from "./register.ts";
import { failures, printFaults, printFindings, printHeader } from "./report.ts";
import { type FaultMix, faultSchedule, type OnecWindow } from "./schedule.ts";
import { type Findings, verify } from "./verify.ts";

/**
 * `npm run soak [-- --quick] [--seed N] [--events N] [--keep]`: a bounded chaos
 * run of the whole system as real processes (two gateways on one register, the
 * 1C emulator with its journal, a retrying shop), then a comparison of every
 * account of every event. Exit 0 only if nothing was duplicated, lost, stuck
 * or misreported, and every resend is a byte-identical 200. See README "Soak".
 */

const WORKERS = 16;
/** The gateway's default SYNC_WAIT_MS: a request unanswered 5 s after it is a defect, not a slow 1C. */
const SYNC_WAIT_MS = 2_000;
const REQUEST_TIMEOUT_MS = SYNC_WAIT_MS + 5_000;
const RETRY_AFTER_CAP_MS = 5_000;
const DOUBLE_SEND_SHARE = 0.25;
/** A flash sale's size: its requests (twice this) are what makes many requests wait on another process at once. */
const BURST_EVENTS = 200;

scrubGatewaySettings(process.env);
let options: SoakOptions;
try {
  options = parseOptions(process.argv.slice(2), process.env);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(`${error.message}\n${USAGE}`);
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), "gateway-soak-"));
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void stopAll().finally(() => process.exit(130)));
}

let passed = false;
try {
  const outcome = await soak(options, dir);
  // Printed after every process has stopped, so the wall time is the whole run's.
  printFindings(outcome.findings, { drainMs: outcome.drainMs, wallMs: performance.now() });
  console.log(`restarts: ${outcome.restarts}`);
  passed = failures(outcome.findings).length === 0;
} catch (error) {
  console.error(`soak could not run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  await stopAll();
  if (passed && !options.keep) rmSync(dir, { recursive: true, force: true });
  else console.log(`register, journal and every process's log kept in ${dir}`);
}
console.log(passed ? "soak passed" : "soak FAILED");
process.exitCode = passed ? 0 : 1;

interface SoakOutcome {
  readonly findings: Findings;
  /** From the end of the last fault to an empty backlog; undefined if it never emptied. */
  readonly drainMs: number | undefined;
  readonly restarts: string;
}

async function soak(options: SoakOptions, dir: string): Promise<SoakOutcome> {
  const prng = new Prng(options.seed);
  const mix = faultMix(options.quick);
  const burstTotal = mix.bursts.reduce((sum, n) => sum + n, 0);
  const events = soakEvents(options.events + burstTotal, options.seed, prng.fork());
  const steady = events.slice(0, options.events);
  const burstEvents = events.slice(options.events);
  const schedule = faultSchedule(prng.fork(), options.faultWindowMs, mix);
  const cluster = await planCluster(dir);
  const { onec, gateways } = cluster;
  const gatewayUrls = gateways.map((g) => g.url);
  printHeader(options, cluster.gatewayEnvs);

  await onec.start();
  await Promise.all(gateways.map((g) => g.start()));
  const register = new RegisterReader(cluster.database);
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
      register: register.rows(SENDER),
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
    register.close();
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
