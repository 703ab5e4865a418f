import { isIP } from "node:net";
import type { SourceSettings } from "../sources/port.ts";
import { type RegisterLocation, registerLocation } from "./database-url.ts";
import { type MetricsExposure, MetricsExposureError, metricsExposure } from "./metrics-exposure.ts";
import { configuredOperators, OperatorConfigError, type OperatorEntry, principalOf } from "./operators.ts";
import { SecretFileError, withSecretFiles } from "./secret-files.ts";
import {
  checkCaseDistinct,
  checkUnique,
  parseSenderTokens,
  readSendersFile,
  SenderConfigError,
  type SenderEntry,
  senderOf,
} from "./senders.ts";
import { readSourcesFile, SourceConfigError } from "./sources.ts";
import { httpUrl, InvalidValue, wholeNumber } from "./values.ts";

/**
 * The gateway's whole configuration, read from the environment once at start.
 * A bad value stops the process with one clear line (see main.ts), never a
 * silent default for something the operator did set.
 */
export interface GatewayConfig {
  readonly port: number;
  readonly host: string;
  /** Where the register lives (DATABASE_URL); src/register/open-register.ts opens it. */
  readonly database: RegisterLocation;
  /**
   * PostgreSQL: connections per process. By default the deliverer's share
   * (up to ONEC_MAX_CONCURRENCY settles plus a claim) and ten for HTTP
   * requests, whose statements take about a millisecond; more queue in the driver.
   */
  readonly databasePoolMax: number;
  /**
   * PostgreSQL: whose clock stamps leases and due times (DATABASE_CLOCK). The
   * database's, so that instances with skewed clocks agree; node's only as an
   * escape hatch (graphile-worker's useNodeTime), e.g. for a server whose clock is wrong.
   */
  readonly databaseClock: "database" | "node";
  readonly onecUrl: string;
  readonly onecUser: string | undefined;
  readonly onecPassword: string | undefined;
  readonly onecTimeoutMs: number;
  readonly syncWaitMs: number;
  readonly bodyLimit: number;
  /** A platform's webhook body: a large order's REST payload is far over BODY_LIMIT (2 KB or so a line). */
  readonly webhookBodyLimit: number;
  readonly requestTimeoutMs: number;
  readonly logLevel: LogLevel;
  readonly retryBaseMs: number;
  readonly retryMaxDelayMs: number;
  readonly retryMaxAttempts: number;
  readonly retryMaxAgeMs: number;
  readonly maxUnfinishedAttempts: number;
  /** 1C's PROCESSING_ERROR answers in one round before the event is final with 1C's text. */
  readonly onecErrorAttempts: number;
  readonly onecMaxConcurrency: number;
  readonly deliveryPollMs: number;
  readonly breakerFailures: number;
  readonly breakerCooldownMs: number;
  readonly breakerMaxCooldownMs: number;
  /** Whether this process runs the deliverer next to the HTTP server. */
  readonly deliverer: boolean;
  /** Bearer token for the admin routes; they are off when unset. */
  readonly adminToken: string | undefined;
  /**
   * Everyone allowed on the admin routes and the CLI's replays, with a role:
   * OPERATORS_FILE's people, and ADMIN_TOKEN as the admin named "admin". Empty: the admin routes are off.
   */
  readonly operators: readonly OperatorEntry[];
  /** Who may send events; empty means anonymous traffic, allowed only with allowAnonymous. */
  readonly senders: readonly SenderEntry[];
  readonly allowAnonymous: boolean;
  /** The platforms whose native webhooks are taken, per sender (SOURCES_FILE); empty: none. */
  readonly sources: readonly SourceSettings[];
  /** Bearer token Prometheus sends for GET /metrics (METRICS_TOKEN); see metricsExposure. */
  readonly metricsToken: string | undefined;
  /** Where and to whom /metrics is served: METRICS_PORT, METRICS_HOST, METRICS_TOKEN, HOST, TRUST_PROXY. */
  readonly metrics: MetricsExposure;
  /** Requests per sender per window on the order routes; 0 turns the limit off. */
  readonly rateLimitMax: number;
  readonly rateLimitWindowMs: number;
  /** Finished events older than this (since they finished) are purged; pending ones never are. */
  readonly retentionMs: number;
  readonly purgeIntervalMs: number;
  /**
   * After SIGTERM, how long /readyz answers 503 while every request is still
   * served, before the server stops listening: a load balancer's health
   * checks take the instance out first, so a rolling restart sends no client a 503.
   */
  readonly shutdownDelayMs: number;
  /**
   * The reverse proxies in front of the gateway (TRUST_PROXY: addresses or
   * CIDR ranges): only their X-Forwarded-Proto/-Host/-For are believed. Behind
   * a proxy that ends TLS, the console then knows the browser used HTTPS and
   * marks its cookie Secure. Empty: the gateway believes no forwarded header.
   */
  readonly trustProxy: readonly string[];
  /**
   * A console session ends after idleMs unused (CONSOLE_SESSION_IDLE_MS, 30
   * minutes) or maxMs after sign-in (CONSOLE_SESSION_MAX_MS, 8 hours),
   * whichever comes first: OWASP ASVS 4.0.3 V3.3.2 at level 2.
   */
  readonly consoleSession: { readonly idleMs: number; readonly maxMs: number };
}

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

type Env = Readonly<Record<string, string | undefined>>;

export interface ConfigDefaults {
  /** Only the demo supplies one: production must name its 1C explicitly. */
  onecUrl?: string;
  host?: string;
}

export function loadConfig(given: Env, defaults: ConfigDefaults = {}): GatewayConfig {
  const env = secretsRead(given);
  const onecUrl = text(env, "ONEC_URL") ?? defaults.onecUrl;
  if (onecUrl === undefined) {
    throw new ConfigError(
      "ONEC_URL is required: the base URL of the 1C HTTP service, e.g. http://1c/base/hs/integration",
    );
  }
  const onecMaxConcurrency = integer(env, "ONEC_MAX_CONCURRENCY", 4, 1, 256);
  const onec = onecCredentials(text(env, "ONEC_USER"), env.ONEC_PASSWORD);
  const breakerCooldownMs = integer(env, "BREAKER_COOLDOWN_MS", 1000, 10, 3_600_000);
  const senderEntries = senders(env);
  const admin = adminToken(text(env, "ADMIN_TOKEN"));
  const operatorEntries = configValue(() =>
    configuredOperators({ file: text(env, "OPERATORS_FILE"), adminToken: admin, senders: senderEntries }),
  );
  const metricsTokenValue = metricsToken(text(env, "METRICS_TOKEN"), senderEntries, operatorEntries);
  const host = text(env, "HOST") ?? defaults.host ?? "0.0.0.0";
  const trustProxy = trustedProxies(text(env, "TRUST_PROXY"));
  return Object.freeze({
    port: integer(env, "PORT", 8080, 0, 65535),
    host,
    database: configValue(() => registerLocation(text(env, "DATABASE_URL") ?? "data/gateway.db")),
    databasePoolMax: integer(env, "DATABASE_POOL_MAX", onecMaxConcurrency + 10, 1, 1000),
    databaseClock: oneOf(env, "DATABASE_CLOCK", ["database", "node"] as const, "database"),
    onecUrl: checkedOnecUrl(onecUrl),
    onecUser: onec.user,
    onecPassword: onec.password,
    onecTimeoutMs: integer(env, "ONEC_TIMEOUT_MS", 10_000, 100, 600_000),
    syncWaitMs: integer(env, "SYNC_WAIT_MS", 2000, 0, 60_000),
    bodyLimit: integer(env, "BODY_LIMIT", 256 * 1024, 1024, 16 * 1024 * 1024),
    webhookBodyLimit: integer(env, "WEBHOOK_BODY_LIMIT", 2 * 1024 * 1024, 1024, 16 * 1024 * 1024),
    requestTimeoutMs: integer(env, "REQUEST_TIMEOUT_MS", 30_000, 100, 600_000),
    logLevel: oneOf(env, "LOG_LEVEL", LOG_LEVELS, "info"),
    retryBaseMs: integer(env, "RETRY_BASE_MS", 1000, 1, 3_600_000),
    retryMaxDelayMs: integer(env, "RETRY_MAX_DELAY_MS", 600_000, 1, 86_400_000),
    retryMaxAttempts: integer(env, "RETRY_MAX_ATTEMPTS", 25, 1, 10_000),
    retryMaxAgeMs: integer(env, "RETRY_MAX_AGE_HOURS", 72, 1, 24 * 365) * 3_600_000,
    maxUnfinishedAttempts: integer(env, "MAX_UNFINISHED_ATTEMPTS", 3, 1, 100),
    onecErrorAttempts: integer(env, "ONEC_ERROR_ATTEMPTS", 3, 1, 100),
    onecMaxConcurrency,
    deliveryPollMs: integer(env, "DELIVERY_POLL_MS", 1000, 10, 60_000),
    breakerFailures: integer(env, "BREAKER_FAILURES", 5, 1, 1000),
    breakerCooldownMs,
    breakerMaxCooldownMs: breakerMaxCooldown(
      optionalInteger(env, "BREAKER_MAX_COOLDOWN_MS", 10, 3_600_000),
      breakerCooldownMs,
    ),
    deliverer: oneOf(env, "DELIVERER", ["on", "off"] as const, "on") === "on",
    adminToken: admin,
    operators: operatorEntries,
    senders: senderEntries,
    allowAnonymous: oneOf(env, "ALLOW_ANONYMOUS", ["true", "false"] as const, "false") === "true",
    sources: configValue(() => {
      const file = text(env, "SOURCES_FILE");
      const sources = file === undefined ? [] : readSourcesFile(file);
      checkCaseDistinct([...senderEntries.map((sender) => sender.id), ...sources.map((source) => source.sender)]);
      return sources;
    }),
    metricsToken: metricsTokenValue,
    metrics: configValue(() =>
      metricsExposure({
        host,
        trustProxy,
        token: metricsTokenValue,
        port: optionalInteger(env, "METRICS_PORT", 0, 65535),
        metricsHost: text(env, "METRICS_HOST"),
      }),
    ),
    rateLimitMax: integer(env, "RATE_LIMIT_MAX", 600, 0, 1_000_000),
    rateLimitWindowMs: integer(env, "RATE_LIMIT_WINDOW_MS", 60_000, 1000, 3_600_000),
    // A purged row is forgotten: a resend of its event_id becomes a new event, and only 1C's own
    // Idempotency-Key register stands between it and a second order. So the row must outlive every
    // sender's retry horizon (hours to a few days) and the weeks support needs to look an event up or
    // replay a FAILED_FINAL one: 30 days by default, never under a day.
    retentionMs: integer(env, "RETENTION_HOURS", 720, 24, 24 * 36_500) * 3_600_000,
    purgeIntervalMs: integer(env, "PURGE_INTERVAL_MS", 3_600_000, 1000, 86_400_000),
    shutdownDelayMs: integer(env, "SHUTDOWN_DELAY_MS", 0, 0, 120_000),
    trustProxy,
    consoleSession: {
      // At least a minute: a session's use is recorded once a minute (SESSION_USE_STEP_MS).
      // At most ASVS 4.0.3 V3.3.2's level 2: 30 minutes idle, 12 hours in all.
      idleMs: integer(env, "CONSOLE_SESSION_IDLE_MS", 30 * 60_000, 60_000, 30 * 60_000),
      maxMs: integer(env, "CONSOLE_SESSION_MAX_MS", 8 * 3_600_000, 60_000, 12 * 3_600_000),
    },
  });
}

/** The environment with every NAME_FILE read into NAME; a ConfigError when one cannot be. */
export function secretsRead(env: Env): Env {
  return configValue(() => withSecretFiles(env));
}

function senders(env: Env): readonly SenderEntry[] {
  const fromTokens = text(env, "SENDER_TOKENS");
  const fromFile = text(env, "SENDERS_FILE");
  return configValue(() =>
    checkUnique([
      ...(fromTokens === undefined ? [] : parseSenderTokens(fromTokens)),
      ...(fromFile === undefined ? [] : readSendersFile(fromFile)),
    ]),
  );
}

/** proxy-addr's names for whole ranges, as Fastify's trustProxy takes them. */
const PROXY_RANGE_NAMES = ["loopback", "linklocal", "uniquelocal"];

/**
 * `TRUST_PROXY=127.0.0.1,10.0.0.0/8`. Not "true": trusting every hop would let
 * any client claim HTTPS or another address by sending the headers itself.
 */
function trustedProxies(raw: string | undefined): readonly string[] {
  if (raw === undefined) return [];
  const entries = raw.split(",").map((entry) => entry.trim());
  for (const entry of entries) {
    const [address = "", prefix, extra] = entry.split("/");
    const family = isIP(address);
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (!PROXY_RANGE_NAMES.includes(entry) && (family === 0 || !prefixOk || extra !== undefined)) {
      throw new ConfigError(
        `TRUST_PROXY must list the proxies' addresses or CIDR ranges (e.g. 127.0.0.1,10.0.0.0/8), or loopback, linklocal, uniquelocal; got "${entry}"`,
      );
    }
  }
  return Object.freeze(entries);
}

function adminToken(token: string | undefined): string | undefined {
  if (token !== undefined && token.length < 16) {
    throw new ConfigError("ADMIN_TOKEN must be at least 16 characters (or unset, which turns the admin routes off)");
  }
  return token;
}

/**
 * Prometheus's own credential: never a sender's or a person's token, which
 * would let whoever reads the scrape config send events or replay them.
 */
function metricsToken(
  token: string | undefined,
  senders: readonly SenderEntry[],
  operators: readonly OperatorEntry[],
): string | undefined {
  if (token === undefined) return undefined;
  if (token.length < 16) {
    throw new ConfigError("METRICS_TOKEN must be at least 16 characters (or unset)");
  }
  const sender = senderOf(token, senders);
  if (sender !== undefined) {
    throw new ConfigError(`METRICS_TOKEN is the token of sender "${sender}"; give each its own`);
  }
  if (principalOf(token, operators) !== undefined) {
    throw new ConfigError("METRICS_TOKEN is an operator's token; give Prometheus its own");
  }
  return token;
}

/**
 * 1C's Basic credentials. RFC 7617 §2: the user-id cannot contain a colon. A
 * password without a user (a misspelt ONEC_USER) would never be sent, and
 * every call would get 401: refused. A user alone sends an empty password,
 * which a 1C infobase user may have.
 */
function onecCredentials(
  user: string | undefined,
  password: string | undefined,
): { user: string | undefined; password: string | undefined } {
  if (user?.includes(":")) throw new ConfigError('ONEC_USER must not contain ":" (HTTP Basic authentication)');
  if (user === undefined && password !== undefined && password !== "") {
    throw new ConfigError(
      "ONEC_PASSWORD is set without ONEC_USER (or ONEC_USER_FILE): 1C's Basic credentials need the user too; set it, or unset ONEC_PASSWORD",
    );
  }
  return { user, password };
}

/** The breaker's cooldown doubles up to the cap, 3000 by default (never below the cooldown); a cap set below it is refused. */
function breakerMaxCooldown(cap: number | undefined, cooldownMs: number): number {
  if (cap === undefined) return Math.max(3000, cooldownMs);
  if (cap < cooldownMs) {
    throw new ConfigError(
      `BREAKER_MAX_COOLDOWN_MS (${cap}) is below BREAKER_COOLDOWN_MS (${cooldownMs}): the cooldown starts at BREAKER_COOLDOWN_MS and doubles up to BREAKER_MAX_COOLDOWN_MS; raise the cap or lower the cooldown`,
    );
  }
  return cap;
}

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  return optionalInteger(env, name, min, max) ?? fallback;
}

function optionalInteger(env: Env, name: string, min: number, max: number): number | undefined {
  const raw = text(env, name);
  return raw === undefined ? undefined : configValue(() => wholeNumber(name, raw, min, max));
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
  }
  return raw as T;
}

function checkedOnecUrl(raw: string): string {
  // Before anything echoes the value: credentials in it are a secret, and it may not even be a URL.
  if (/^[^/?#]*\/\/[^/?#]*@|^[^/:?#]*:[^/?#]*@/.test(raw)) {
    throw new ConfigError("ONEC_URL must not carry credentials: use ONEC_USER and ONEC_PASSWORD");
  }
  const url = configValue(() => httpUrl("ONEC_URL", raw));
  const { username, password } = new URL(url);
  if (username !== "" || password !== "") {
    throw new ConfigError("ONEC_URL must not carry credentials: use ONEC_USER and ONEC_PASSWORD");
  }
  return url.replace(/\/+$/, "");
}

/** What the configuration's parsers throw for a value they refuse: each becomes a ConfigError with its message. */
const REFUSALS = [
  InvalidValue,
  SenderConfigError,
  OperatorConfigError,
  MetricsExposureError,
  SecretFileError,
  SourceConfigError,
];

function configValue<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (REFUSALS.some((refusal) => error instanceof refusal)) throw new ConfigError((error as Error).message);
    throw error;
  }
}
