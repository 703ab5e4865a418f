import { join } from "node:path";
import { emulatorSpec, type Server, startServer, stopServer } from "../bench/processes.ts";
import { freePorts } from "../soak/processes.ts";
import { call } from "../support/http.ts";
import { type Launched, launchGateway, launchWorker } from "./child-process.ts";
import { pollUntil } from "./poll.ts";

/**
 * 1C's deadline per call, short so that the delivery lease (this plus
 * max(1 s, half of it): 4.5 s) runs out within a test.
 */
export const ONEC_TIMEOUT_MS = 3000;
export const LEASE_MS = ONEC_TIMEOUT_MS + Math.max(1000, ONEC_TIMEOUT_MS / 2);

const GATEWAYS = 3;
const WORKERS = 2;
/** A start takes about 2 s on a quiet machine; other test files share its two cores. */
const STARTUP_MS = 60_000;
/** Ten of the test balancer's health checks (every 100 ms): it takes a stopping gateway out in time. */
const SHUTDOWN_DELAY_MS = 1000;

/** A running `gateway worker`. */
export interface Worker {
  readonly process: Launched<string>;
  /** The lease owner it claims under, as the register and the attempt history name it. */
  readonly owner: string;
}

/**
 * Three `npm start` servers with DELIVERER=off, two `gateway worker`s and the
 * 1C emulator, each its own process, on one PostgreSQL register. The gateways
 * keep their ports across restarts, as instances behind a balancer do.
 */
export interface Cluster {
  readonly onecUrl: string;
  /** The emulator's order journal: 1C's own durable record of what it created. */
  readonly journal: string;
  readonly gatewayUrls: readonly string[];
  /** The running workers, by slot; replaceWorker() fills a slot anew. */
  readonly workers: readonly Worker[];
  /** SIGTERM, wait for the exit, start a new process on the same port, wait for its /readyz. */
  restartGateway(slot: number): Promise<Restart>;
  /** A fresh worker in `slot`, the old one gone (killed by the test, or stopped here with SIGTERM). */
  replaceWorker(slot: number): Promise<Worker>;
  /** SIGKILL to every process of the cluster, running or still starting. */
  stop(): Promise<void>;
}

/** One gateway's restart, as it went: epoch ms of each step. */
export interface Restart {
  url: string;
  /** The old process's exit code: 0 for a graceful stop. */
  exitCode: number | null;
  stoppingAt: number;
  exitedAt: number;
  readyAt: number;
}

/**
 * The environment every instance shares, as one deployment's would. Only
 * what the test needs differs from the production defaults.
 */
function sharedEnv(databaseUrl: string, onecUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    ONEC_URL: onecUrl,
    ONEC_TIMEOUT_MS: String(ONEC_TIMEOUT_MS),
    // One shop sends thousands of requests here; the default 600 a minute per instance would refuse it.
    RATE_LIMIT_MAX: "0",
    // Five processes on a server with max_connections = 100, beside other test files' databases.
    DATABASE_POOL_MAX: "8",
    LOG_LEVEL: "info",
    ALLOW_ANONYMOUS: "true",
  };
}

export async function startCluster(databaseUrl: string, logDir: string): Promise<Cluster> {
  const journal = join(logDir, "onec-journal.jsonl");
  const base = emulatorSpec("onec");
  const onec: Server = await startServer({ ...base, env: { ...base.env, ONEC_EMULATOR_JOURNAL: journal } }, logDir);
  const env = sharedEnv(databaseUrl, onec.url);
  const ports = await freePorts(GATEWAYS);
  const gatewayUrls = ports.map((port) => `http://127.0.0.1:${port}`);
  const launched = new Set<Launched<string>>();
  const gateways: Launched<string>[] = [];
  const workers: Worker[] = [];

  const track = (process: Launched<string>) => {
    launched.add(process);
    process.child.once("exit", () => launched.delete(process));
    return process;
  };
  const startGateway = async (slot: number) => {
    const port = ports[slot];
    if (port === undefined) throw new Error(`no gateway slot ${slot}`);
    const gateway = track(
      // As docs/operations.md's "Running several instances" says to run them behind a balancer: not ready
      // for a while after SIGTERM, longer than the balancer's health-check interval, before stopping.
      launchGateway(
        {
          ...env,
          DELIVERER: "off",
          SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
          HOST: "127.0.0.1",
          PORT: String(port),
        },
        STARTUP_MS,
      ),
    );
    gateways[slot] = gateway;
    await readyz(await gateway.ready);
  };
  const startWorker = async (slot: number) => {
    const process = track(launchWorker(env, STARTUP_MS));
    const worker = { process, owner: await process.ready };
    workers[slot] = worker;
    return worker;
  };
  const stop = async () => {
    await Promise.all([...launched].map((process) => process.stop("SIGKILL")));
    await stopServer(onec.child);
  };

  // All at once: the instances race on the register's first migration, as those of one deployment do.
  try {
    await Promise.all([
      ...ports.map((_port, slot) => startGateway(slot)),
      ...Array.from({ length: WORKERS }, (_, slot) => startWorker(slot)),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    onecUrl: onec.url,
    journal,
    gatewayUrls,
    workers,
    restartGateway: async (slot) => {
      const old = gateways[slot];
      const url = gatewayUrls[slot];
      if (old === undefined || url === undefined) throw new Error(`no gateway in slot ${slot}`);
      const stoppingAt = Date.now();
      await old.stop("SIGTERM");
      const exitedAt = Date.now();
      await startGateway(slot);
      return { url, exitCode: old.child.exitCode, stoppingAt, exitedAt, readyAt: Date.now() };
    },
    replaceWorker: async (slot) => {
      await workers[slot]?.process.stop("SIGTERM");
      return startWorker(slot);
    },
    stop,
  };
}

/** What a balancer waits for before it sends an instance traffic. */
async function readyz(url: string): Promise<void> {
  await pollUntil(
    `${url}/readyz answers 200`,
    async () => (await call(`${url}/readyz`).catch(() => undefined))?.status === 200 || undefined,
    STARTUP_MS,
  );
}
