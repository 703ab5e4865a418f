import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { RegisterLocation } from "../../src/config/database-url.ts";
import type { ServerSpec } from "../bench/processes.ts";
import { START_ENTRY, startNodeFlags } from "../support/start-script.ts";
import { freePorts, Supervised } from "./processes.ts";

/** The one sender the shop is, with a bearer token as in production (not ALLOW_ANONYMOUS). */
export const SENDER = "soak-shop";

/** What the soak runs: the 1C emulator and two gateways on one register, not started yet. */
export interface Cluster {
  readonly onec: Supervised;
  readonly gateways: readonly Supervised[];
  /** Each gateway's environment, exactly as set: everything else is the gateway's default. */
  readonly gatewayEnvs: readonly Readonly<Record<string, string>>[];
  readonly journal: string;
  readonly token: string;
}

/** `register`: the one register both gateways share, on either backend. */
export async function planCluster(dir: string, register: RegisterLocation): Promise<Cluster> {
  const token = randomBytes(24).toString("hex");
  const database = register.kind === "sqlite" ? register.path : register.url;
  const journal = join(dir, "onec-journal.jsonl");
  const [onecPort = 0, ...gatewayPorts] = await freePorts(3);
  const onec = new Supervised("onec", onecPort, dir, (life) => emulatorSpec(`onec.${life}`, onecPort, journal));
  const gatewayEnvs = gatewayPorts.map((port) => gatewayEnv(port, database, onec.url, token));
  const gateways = gatewayEnvs.map((env, i) => {
    const name = `gateway-${"ab"[i]}`;
    return new Supervised(name, Number(env.PORT), dir, (life) => gatewaySpec(`${name}.${life}`, env));
  });
  return { onec, gateways, gatewayEnvs, journal, token };
}

/**
 * Gateway settings a soak must change, and nothing else: everything not
 * listed runs at its production default (SYNC_WAIT_MS, retries, breaker,
 * MAX_UNFINISHED_ATTEMPTS, LOG_LEVEL, concurrency, polling).
 */
function gatewayEnv(port: number, database: string, onecUrl: string, token: string): Record<string, string> {
  return {
    HOST: "127.0.0.1",
    // Fixed, so the shop can keep sending to either gateway across its restarts.
    PORT: String(port),
    DATABASE_URL: database,
    ONEC_URL: onecUrl,
    SENDER_TOKENS: `${SENDER}:${token}`,
    // 16 workers and their retries outrun the default 600 requests a minute per sender.
    RATE_LIMIT_MAX: "1000000",
    // The default 10 s would let one hang-after-commit call outlast a quick run; the lease follows it (+1 s).
    ONEC_TIMEOUT_MS: "1500",
  };
}

const GATEWAY_SETTINGS =
  /^(PORT|HOST|DATABASE_.*|ONEC_.*|SYNC_WAIT_MS|BODY_LIMIT|REQUEST_TIMEOUT_MS|LOG_LEVEL|RETRY_.*|MAX_UNFINISHED_ATTEMPTS|DELIVERY_POLL_MS|BREAKER_.*|DELIVERER|ADMIN_TOKEN|SENDER_TOKENS|SENDERS_FILE|ALLOW_ANONYMOUS|RATE_LIMIT_.*|RETENTION_HOURS|PURGE_INTERVAL_MS)$/;

/** Children inherit this process's environment: a stray setting there would silently change the gateways' defaults. */
export function scrubGatewaySettings(env: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(env)) if (GATEWAY_SETTINGS.test(name)) delete env[name];
}

function emulatorSpec(name: string, port: number, journal: string): ServerSpec {
  return {
    name,
    script: "src/onec-emulator/main.ts",
    env: { ONEC_EMULATOR_PORT: String(port), ONEC_EMULATOR_HOST: "127.0.0.1", ONEC_EMULATOR_JOURNAL: journal },
    listeningUrl: (line) => /^1C emulator listening on (\S+)/.exec(line)?.[1],
  };
}

function gatewaySpec(name: string, env: Record<string, string>): ServerSpec {
  return { name, script: START_ENTRY, nodeArgs: startNodeFlags(), env, listeningUrl: fastifyListeningUrl };
}

/** Fastify's pino line: {"msg":"Server listening at http://127.0.0.1:PORT", ...}. */
function fastifyListeningUrl(line: string): string | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const { msg } = JSON.parse(line) as { msg?: unknown };
    return typeof msg === "string" ? /^Server listening at (\S+)/.exec(msg)?.[1] : undefined;
  } catch {
    return undefined;
  }
}
