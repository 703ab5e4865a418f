import closeWithGrace from "close-with-grace";
import { ConfigError, loadConfig } from "./config/load-config.ts";
import { createGateway } from "./gateway.ts";
import { createLogger } from "./observability/logger.ts";

/** The production server: `npm start`. Configuration comes only from the environment. */
async function main(): Promise<void> {
  const config = orExit(() => loadConfig(process.env));
  const logger = createLogger(config.logLevel);
  const gateway = orExit(() => createGateway(config, logger));
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) logger.error({ err }, "stopping after an unexpected error");
    else logger.info({ signal }, "stopping");
    await gateway.close();
  });
  await gateway.app.listen({ port: config.port, host: config.host });
}

/** A bad configuration stops the process with one line and exit code 1. */
function orExit<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`configuration error: ${error.message}\n`);
    process.exit(1);
  }
}

await main();
