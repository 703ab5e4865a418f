import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import closeWithGrace from "close-with-grace";
import { describeLocation, type RegisterLocation } from "./config/database-url.ts";
import { ConfigError, loadConfig } from "./config/load-config.ts";
import { createGateway } from "./gateway.ts";
import { createLogger } from "./observability/logger.ts";
import { startOnecEmulator } from "./onec-emulator/emulator.ts";

/**
 * `npm run demo`: the gateway on SQLite in data/ plus the bundled 1C emulator,
 * on loopback, with a ready request to try. Production is `npm start`, which
 * never falls back to the emulator.
 *
 * The register outlives the process, so the emulator's orders do too (a journal
 * beside the register): a restarted demo that remembered an event 1C had
 * forgotten would answer repeats with an order 1C no longer holds, and a
 * replay would book a second one. Without ADMIN_TOKEN or OPERATORS_FILE the
 * demo makes an admin token for this run, so the console at /console opens.
 */
async function demo(): Promise<void> {
  const env: NodeJS.ProcessEnv = { ALLOW_ANONYMOUS: "true", ...process.env };
  const adminConfigured = env.ADMIN_TOKEN || env.ADMIN_TOKEN_FILE || env.OPERATORS_FILE;
  const madeAdminToken = adminConfigured ? undefined : randomBytes(24).toString("base64url");
  let config: ReturnType<typeof loadConfig>;
  try {
    // The demo has no shop tokens: all its traffic is the anonymous sender "default".
    config = loadConfig(
      { ...env, ...(madeAdminToken === undefined ? {} : { ADMIN_TOKEN: madeAdminToken }) },
      { onecUrl: "http://127.0.0.1:8081", host: "127.0.0.1" },
    );
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return fail(`configuration error: ${error.message}`);
  }
  const emulatorPort = Number(env.ONEC_EMULATOR_PORT ?? 8081);
  const journalPath = env.ONEC_EMULATOR_JOURNAL || journalBesideRegister(config.database);
  // The register's folder is made when the register opens, after the emulator has started.
  if (journalPath !== undefined) mkdirSync(dirname(journalPath), { recursive: true });
  const emulator = await startOnecEmulator({ host: "127.0.0.1", port: emulatorPort, journalPath }).catch(
    (error: unknown) => fail(cannotListen(error, "the 1C emulator", emulatorPort, "ONEC_EMULATOR_PORT")),
  );
  const logger = createLogger(config.logLevel);
  // ONEC_URL set: the demo's gateway talks to that 1C, and the emulator only waits.
  const gateway = await createGateway(env.ONEC_URL ? config : { ...config, onecUrl: emulator.url }, logger);
  closeWithGrace({ delay: 10_000 }, async () => {
    await gateway.close();
    await emulator.close();
  });
  const url = await gateway.app.listen({ port: config.port, host: config.host }).catch(async (error: unknown) => {
    await gateway.close();
    await emulator.close();
    return fail(cannotListen(error, "the gateway", config.port, "PORT"));
  });
  process.stdout.write(
    banner({
      gatewayUrl: url,
      emulatorUrl: emulator.url,
      register: describeLocation(config.database),
      journalPath,
      madeAdminToken,
    }),
  );
}

/** A register in memory forgets on exit, so its emulator keeps nothing either. */
function journalBesideRegister(database: RegisterLocation): string | undefined {
  if (database.kind !== "sqlite" || database.path === ":memory:") return undefined;
  return join(dirname(database.path), "demo-1c-orders.jsonl");
}

/** A port's refusal, said with the setting that moves it; any other failure is rethrown as it is. */
function cannotListen(error: unknown, what: string, port: number, setting: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EADDRINUSE")
    return `${what} cannot listen on 127.0.0.1:${port}: the port is in use; set ${setting} to another port`;
  if (code === "EACCES")
    return `${what} cannot listen on 127.0.0.1:${port}: permission denied; set ${setting} to a port above 1023`;
  throw error;
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

interface BannerFacts {
  gatewayUrl: string;
  emulatorUrl: string;
  register: string;
  journalPath: string | undefined;
  madeAdminToken: string | undefined;
}

function banner({ gatewayUrl, emulatorUrl, register, journalPath, madeAdminToken }: BannerFacts): string {
  const endpoint = `${gatewayUrl}/integration/v1/orders/paid`;
  const orders = journalPath === undefined ? "in memory" : journalPath;
  const consoleLine =
    madeAdminToken === undefined
      ? `    console   ${gatewayUrl}/console   (sign in with your ADMIN_TOKEN or OPERATORS_FILE token)`
      : `    console   ${gatewayUrl}/console   (admin token for this run: ${madeAdminToken})`;
  return `
  1C order gateway demo
    gateway   ${gatewayUrl}   (register: ${register})
    1C        ${emulatorUrl}   (emulator; orders: ${emulatorUrl}/_emulator/orders, kept ${orders})
${consoleLine}

  Send the example event (run it twice: 201 first, then 200 with Idempotent-Replayed: true):
    curl -i ${endpoint} \\
      -H 'Content-Type: application/json' -H 'X-Correlation-ID: demo-1' \\
      --data-binary @schemas/examples/order-paid.json

  Look at its status:
    curl -s ${endpoint}/evt_2026-11-29_shop-a_100234

  Make 1C slow or down, then send a new event_id and watch the 202:
    curl -X PUT ${emulatorUrl}/_emulator/faults -d '{"latencyMs":5000}'
    curl -X PUT ${emulatorUrl}/_emulator/faults -d '{"unavailable":true}'

  Ctrl+C stops both. To start afresh, stop it and delete the register (its -wal and -shm files too)
  and the emulator's orders file.
`;
}

await demo();
