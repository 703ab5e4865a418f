import { parseArgs } from "node:util";
import closeWithGrace from "close-with-grace";
import type { Logger } from "pino";
import { describeLocation } from "../../config/database-url.ts";
import { type GatewayConfig, loadConfig } from "../../config/load-config.ts";
import { createDeliveryStack } from "../../gateway.ts";
import { createLogger } from "../../observability/logger.ts";
import { noPositionals, parsing } from "../args.ts";
import type { Command } from "../context.ts";

const GRACE_MS = 10_000;

/**
 * Runs the deliverer alone, without the HTTP server, until SIGINT or SIGTERM;
 * then stops claiming, lets the calls in flight write their outcome, closes
 * the database. Resolves with the exit code (close-with-grace exits with it).
 */
export async function runWorker(config: GatewayConfig, logger: Logger): Promise<number> {
  const stack = await createDeliveryStack(config, logger);
  const stopped = new Promise<number>((resolve) => {
    closeWithGrace({ delay: GRACE_MS }, async ({ signal, err }) => {
      if (err) logger.error({ err }, "worker stopping after an unexpected error");
      else logger.info({ signal }, "worker stopping");
      await stack.close();
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
BREAKER_*, LOG_LEVEL. Logs JSON lines to stdout.`,
  async run(argv, context) {
    const { positionals } = parsing(() => parseArgs({ args: argv, options: {}, allowPositionals: true }));
    noPositionals(positionals);
    const config = loadConfig(context.env);
    return runWorker(config, createLogger(config.logLevel));
  },
};
