import { randomInt } from "node:crypto";
import { registerLocation } from "../../src/config/database-url.ts";
import { InvalidValue } from "../../src/config/values.ts";

/** What one soak run does; everything derives from the mode and the seed. */
export interface SoakOptions {
  readonly quick: boolean;
  readonly seed: number;
  /** New events the shop sends over the fault window. */
  readonly events: number;
  /** Faults happen in this window, measured from the first request; new events stop at its end. */
  readonly faultWindowMs: number;
  /** After the last fault, how long the backlog may take to drain before what is left counts as stuck. */
  readonly drainLimitMs: number;
  /** Keep the temp folder (register, journal, logs) and the PostgreSQL database even when the run passes. */
  readonly keep: boolean;
  /** The PostgreSQL server to make the run's register database on; undefined: a SQLite file in the temp folder. */
  readonly postgres: string | undefined;
}

export class UsageError extends Error {
  override readonly name = "UsageError";
}

export const USAGE =
  "usage: [DATABASE_URL=postgres://…] npm run soak -- [--quick] [--seed N] [--events N] [--keep] [--postgres [URL]]";

/** `--postgres` with no URL and no postgres:// DATABASE_URL: the test server, as `npm test` and the benches use it. */
const DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres";

/**
 * Flags after `--`, and also what npm turns `npm run soak --quick` into
 * (npm_config_quick=true): without `--`, npm keeps the flags for itself.
 * A postgres:// DATABASE_URL, or `--postgres [URL]`, runs the gateways on
 * PostgreSQL; any other DATABASE_URL is ignored, as the soak makes its own
 * SQLite file. Reads `env` before run.ts scrubs the gateway settings from it.
 */
export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): SoakOptions {
  const flags = new Map<string, string>();
  for (const name of ["quick", "seed", "events", "keep", "postgres"]) {
    const value = env[`npm_config_${name}`];
    if (value !== undefined && value !== "") flags.set(name, value);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (match?.[1] === undefined) throw new UsageError(`unexpected argument ${arg}`);
    const name = match[1];
    if (name === "quick" || name === "keep") {
      flags.set(name, match[2] ?? "true");
    } else if (name === "seed" || name === "events") {
      const value = match[2] ?? argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      flags.set(name, value);
    } else if (name === "postgres") {
      // The URL is optional: a flag after --postgres is not its URL.
      let value = match[2];
      const next = argv[i + 1];
      if (value === undefined && next !== undefined && !next.startsWith("-")) {
        value = next;
        i++;
      }
      flags.set(name, value ?? "true");
    } else {
      throw new UsageError(`unknown flag --${name}`);
    }
  }
  const quick = flags.get("quick") === "true";
  return {
    quick,
    seed: wholeNumber(flags, "seed", randomInt(1, 1_000_000)),
    events: wholeNumber(flags, "events", quick ? 760 : 3000),
    faultWindowMs: quick ? 38_000 : 150_000,
    // Longer than the breaker's default 30 s cooldown (BREAKER_COOLDOWN_MS), which a fault near the
    // end may have started: recovery after it is what the drain time shows.
    drainLimitMs: quick ? 45_000 : 60_000,
    keep: flags.get("keep") === "true",
    postgres: postgresServer(flags.get("postgres"), env.DATABASE_URL),
  };
}

/** `flag`: the flag's URL, "true" when given bare, undefined when not given. */
function postgresServer(flag: string | undefined, databaseUrl: string | undefined): string | undefined {
  const fromEnv = databaseUrl !== undefined && isPostgres(databaseUrl) ? databaseUrl : undefined;
  if (flag === undefined) return fromEnv;
  if (flag === "true") return fromEnv ?? DEFAULT_POSTGRES;
  if (!isPostgres(flag)) throw new UsageError(`--postgres takes a postgres:// URL, got ${flag}`);
  return flag;
}

/** What the gateway itself takes for a PostgreSQL server; what it would refuse (an empty path) is not one. */
function isPostgres(url: string): boolean {
  try {
    return registerLocation(url).kind === "postgres";
  } catch (error) {
    if (error instanceof InvalidValue) return false;
    throw error;
  }
}

function wholeNumber(flags: Map<string, string>, name: string, fallback: number): number {
  const raw = flags.get(name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new UsageError(`--${name} must be a positive whole number`);
  return Number(raw);
}
