import { parseArgs } from "node:util";
import closeWithGrace from "close-with-grace";
import type { Logger } from "pino";
import { describeLocation } from "../../config/database-url.ts";
import { type GatewayConfig, loadConfig } from "../../config/load-config.ts";
import { createDeliveryStack, createMetrics, listenForMetrics, metricsAppFor } from "../../gateway.ts";
import { createLogger } from "../../observability/logger.ts";
import { startTracing } from "../../observability/tracing.ts";
import { noPositionals, parsing } from "../args.ts";
import { CliFailure, type Command } from "../context.ts";

const GRACE_MS = 10_000;

/**
 * Runs the deliverer alone, without the HTTP server, until SIGINT or SIGTERM;
 * then stops claiming, lets the calls in flight write their outcome, closes
 * the database. Resolves with the exit code (close-with-grace exits with it).
 *
 * With METRICS_PORT it serves GET /metrics there, for Prometheus to pull: one
 * target per worker, like each server. Its own counters (attempts, 1C
 * latency, FAILED_FINAL by reason) and its own breaker are only in this
 * process, and a dead worker shows as its target down; a push to the main
 * instance would make that instance a single point of failure for the whole
 * fleet's metrics and leave a stopped worker's last numbers standing.
 */
export async function runWorker(config: GatewayConfig, logger: Logger): Promise<number> {
  const tracing = await startTracing(process.env);
  const stack = await createDeliveryStack(config, logger);
  const metricsApp = metricsAppFor(config, () => createMetrics(stack, Date.now), logger);
  let metricsUrl: string | undefined;
  if (metricsApp !== undefined) {
    try {
      metricsUrl = `${await listenForMetrics(metricsApp, config)}/metrics`;
    } catch (error) {
      await Promise.all([metricsApp.close(), stack.close()]);
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new CliFailure(`cannot serve /metrics on METRICS_HOST:METRICS_PORT: ${code}`);
    }
  }
  const stopped = new Promise<number>((resolve) => {
    closeWithGrace({ delay: GRACE_MS }, async ({ signal, err }) => {
      if (err) logger.error({ err }, "worker stopping after an unexpected error");
      else logger.info({ signal }, "worker stopping");
      // Scraped until the last outcome is written, then closed.
      await stack.close();
      await metricsApp?.close();
      await tracing?.shutdown();
      logger.info("worker stopped");
      resolve(err ? 1 : 0);
    });
  });
  stack.deliverer.start();
  logger.info(
    {
      owner: stack.owner,
      concurrency: config.onecMaxConcurrency,
      poll_ms: config.deliveryPollMs,
      onec_url: config.onecUrl,
      database: describeLocation(config.database),
      metrics: metricsUrl ?? "off (set METRICS_PORT)",
    },
    "worker started: delivering pending events to 1C",
  );
  return stopped;
}

export const workerCommand: Command = {
  name: "worker",
  synopsis: "worker",
  summary: "deliver pending events to 1C, no HTTP server",
  help: `Usage: gateway worker

Runs the deliverer without the HTTP server: claims due events from the
database, sends them to 1C, writes each outcome, until SIGINT or SIGTERM
(then it waits up to ${GRACE_MS / 1000} s for the calls in flight). Any number of workers and
servers may share one database: leases keep each event to one attempt at a time.
Run the server with DELIVERER=off to leave delivery to workers.

Reads the same environment as the server: ONEC_URL (required), ONEC_USER,
ONEC_PASSWORD, DATABASE_URL, DELIVERY_POLL_MS, ONEC_MAX_CONCURRENCY, RETRY_*,
BREAKER_*, LOG_LEVEL; each secret also as NAME_FILE. Logs JSON lines to stdout.

Metrics: with METRICS_PORT set, serves GET /metrics on that port (METRICS_HOST,
127.0.0.1 unless set; beyond loopback METRICS_TOKEN is required, sent by
Prometheus as a bearer token): the worker's delivery attempts by outcome, 1C
latency, FAILED_FINAL by reason, its breaker, and the register's backlog.
Scrape each worker as its own target, in the same job as the servers.`,
  async run(argv, context) {
    const { positionals } = parsing(() => parseArgs({ args: argv, options: {}, allowPositionals: true }));
    noPositionals(positionals);
    const config = loadConfig(context.env);
    return runWorker(config, createLogger(config.logLevel));
  },
};
