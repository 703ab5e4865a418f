import { setTimeout as sleep } from "node:timers/promises";
import closeWithGrace from "close-with-grace";
import { ConfigError, loadConfig } from "./config/load-config.ts";
import { createGateway, listenForMetrics } from "./gateway.ts";
import { createLogger } from "./observability/logger.ts";
import { startTracing } from "./observability/tracing.ts";
import { StorageUnavailableError } from "./register/port.ts";

/** The production server: `npm start`. Configuration comes only from the environment. */
async function main(): Promise<void> {
  const config = await orExit(() => loadConfig(process.env));
  const logger = createLogger(config.logLevel);
  // Before the server exists: its first request may already carry a trace.
  const tracing = await orExit(() => startTracing(process.env));
  const gateway = await orExit(() => createGateway(config, logger));
  // The delay bounds the whole stop: the drain, then 10 s for calls in flight to finish.
  closeWithGrace({ delay: config.shutdownDelayMs + 10_000 }, async ({ signal, err }) => {
    if (err) {
      logger.error({ err }, "stopping after an unexpected error");
    } else if (config.shutdownDelayMs > 0) {
      logger.info({ signal, drain_ms: config.shutdownDelayMs }, "stopping: not ready, serving until the drain ends");
      gateway.drain();
      await sleep(config.shutdownDelayMs);
    } else {
      logger.info({ signal }, "stopping");
    }
    await gateway.close();
    // Last: the spans of the calls that finished during the stop go out too.
    await tracing?.shutdown();
  });
  await gateway.app.listen({ port: config.port, host: config.host });
  if (gateway.metricsApp !== undefined) await listenForMetrics(gateway.metricsApp, config);
  if (config.metrics.access === "closed") {
    logger.warn(
      { host: config.host },
      "GET /metrics answers 401 to everyone: the gateway listens beyond loopback (or behind TRUST_PROXY) and METRICS_TOKEN is unset; set METRICS_TOKEN, or METRICS_PORT for a listener of its own",
    );
  }
}

/** A bad configuration, or a register that cannot be opened, stops the process with one line and exit code 1. */
async function orExit<T>(build: () => T | Promise<T>): Promise<T> {
  try {
    return await build();
  } catch (error) {
    if (error instanceof StorageUnavailableError) {
      process.stderr.write(`cannot open the register: ${error.message}\n`);
      process.exit(1);
    }
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`configuration error: ${error.message}\n`);
    process.exit(1);
  }
}

await main();
