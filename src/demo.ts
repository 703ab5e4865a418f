import closeWithGrace from "close-with-grace";
import { describeLocation } from "./config/database-url.ts";
import { ConfigError, loadConfig } from "./config/load-config.ts";
import { createGateway } from "./gateway.ts";
import { createLogger } from "./observability/logger.ts";
import { startOnecEmulator } from "./onec-emulator/emulator.ts";

/**
 * `npm run demo`: the gateway on SQLite in data/ plus the bundled 1C emulator,
 * on loopback, with a ready request to try. Production is `npm start`, which
 * never falls back to the emulator.
 */
async function demo(): Promise<void> {
  const emulator = await startOnecEmulator({
    host: "127.0.0.1",
    port: Number(process.env.ONEC_EMULATOR_PORT ?? 8081),
  });
  let config: ReturnType<typeof loadConfig>;
  try {
    // The demo has no shop tokens: all its traffic is the anonymous sender "default".
    config = loadConfig({ ALLOW_ANONYMOUS: "true", ...process.env }, { onecUrl: emulator.url, host: "127.0.0.1" });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`configuration error: ${error.message}\n`);
    await emulator.close();
    process.exit(1);
  }
  const logger = createLogger(config.logLevel);
  const gateway = await createGateway(config, logger);
  closeWithGrace({ delay: 10_000 }, async () => {
    await gateway.close();
    await emulator.close();
  });
  const url = await gateway.app.listen({ port: config.port, host: config.host });
  process.stdout.write(banner(url, emulator.url, describeLocation(config.database)));
}

function banner(gatewayUrl: string, emulatorUrl: string, databasePath: string): string {
  const endpoint = `${gatewayUrl}/integration/v1/orders/paid`;
  return `
  1C order gateway demo
    gateway   ${gatewayUrl}   (register: ${databasePath})
    1C        ${emulatorUrl}   (emulator; orders: ${emulatorUrl}/_emulator/orders)

  Send the example event (run it twice: 201 first, then 200 with Idempotent-Replayed: true):
    curl -i ${endpoint} \\
      -H 'Content-Type: application/json' -H 'X-Correlation-ID: demo-1' \\
      --data-binary @schemas/examples/order-paid.json

  Look at its status:
    curl -s ${endpoint}/evt_2026-11-29_shop-a_100234

  Make 1C slow or down, then send a new event_id and watch the 202:
    curl -X PUT ${emulatorUrl}/_emulator/faults -d '{"latencyMs":5000}'
    curl -X PUT ${emulatorUrl}/_emulator/faults -d '{"unavailable":true}'

  Ctrl+C stops both.
`;
}

await demo();
