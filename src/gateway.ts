import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { OrderPaidAcceptor } from "./accept/order-paid-acceptor.ts";
import { buildApp } from "./app.ts";
import { ConfigError, type GatewayConfig } from "./config/load-config.ts";
import { Deliverer } from "./delivery/deliverer.ts";
import type { DeliveryPolicy } from "./delivery/retry-policy.ts";
import { EventStatus } from "./domain/event-status.ts";
import { buildMetricsApp } from "./http/routes/metrics.ts";
import { GatewayMetrics } from "./observability/metrics.ts";
import { OnecClient } from "./onec/client.ts";
import { openRegister } from "./register/open-register.ts";
import type { EventRegister } from "./register/port.ts";
import { DEFAULT_SENDER } from "./register/senders.ts";
import { reportingWrites, Writability } from "./register/writability.ts";
import { Purger } from "./retention/purger.ts";
import type { SourceSettings } from "./sources/port.ts";
import { withinDeadline } from "./util/deadline.ts";

/**
 * A delivery lease outlives the longest attempt by a margin, so an attempt
 * still waiting on 1C is never taken over; a crashed one is taken over soon
 * after. The longest attempt is two calls, each within the 1C deadline: the
 * POST, then, when it timed out on an event's last chance, asking 1C whether
 * it has the event. A lease shorter than both let a hanging 1C's attempts be
 * taken over and counted as crashes by the poison rule, until the event
 * ended FAILED_FINAL though 1C would have taken it once back.
 */
export function leaseMsFor(onecTimeoutMs: number): number {
  return LONGEST_ATTEMPT_CALLS * onecTimeoutMs + Math.max(1000, Math.round(onecTimeoutMs / 2));
}

/** The calls to 1C one attempt may make, one after the other: the POST, then the lookup. */
export const LONGEST_ATTEMPT_CALLS = 2;

export function deliveryPolicyOf(config: GatewayConfig): DeliveryPolicy {
  return {
    baseMs: config.retryBaseMs,
    maxDelayMs: config.retryMaxDelayMs,
    maxAttempts: config.retryMaxAttempts,
    maxAgeMs: config.retryMaxAgeMs,
    maxUnfinishedAttempts: config.maxUnfinishedAttempts,
    maxOnecErrors: config.onecErrorAttempts,
  };
}

/**
 * How long a stop waits for calls to 1C in flight before it cuts them short: within main.ts's
 * 10 s after the drain, leaving 3 s to write their attempts and close the register.
 */
export const CALLS_IN_FLIGHT_GRACE_MS = 7_000;

export function processOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/** The register, the 1C client and the deliverer: what the server and `gateway worker` share. */
export interface DeliveryStack {
  /** Lease owner of this process's deliverer, as attempt histories show it. */
  owner: string;
  register: EventRegister;
  /** The register's writability, learnt from its writes; its probe runs only where /readyz is served (start()). */
  writability: Writability;
  onec: OnecClient;
  deliverer: Deliverer;
  close(): Promise<void>;
}

export async function createDeliveryStack(
  config: GatewayConfig,
  logger: Logger,
  now: () => number = Date.now,
): Promise<DeliveryStack> {
  const opened = await openRegister(config.database, {
    poolMax: config.databasePoolMax,
    clock: config.databaseClock,
  });
  const writability = new Writability({ probe: () => opened.ping(), log: logger });
  const register = reportingWrites(opened, writability);
  const onec = new OnecClient({
    baseUrl: config.onecUrl,
    user: config.onecUser,
    password: config.onecPassword,
    timeoutMs: config.onecTimeoutMs,
    maxConnections: config.onecMaxConcurrency,
  });
  const owner = processOwnerId();
  const deliverer = new Deliverer(
    { register, onec, now, log: logger, policy: deliveryPolicyOf(config) },
    {
      owner,
      concurrency: config.onecMaxConcurrency,
      leaseMs: leaseMsFor(config.onecTimeoutMs),
      pollMs: config.deliveryPollMs,
      breaker: {
        failureThreshold: config.breakerFailures,
        cooldownMs: config.breakerCooldownMs,
        // Never below cooldownMs: loadConfig refuses a cap set lower.
        maxCooldownMs: config.breakerMaxCooldownMs,
      },
    },
  );
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const stopped = deliverer.stop().then(() => true);
      // Calls still out after the grace end now, and their attempts are written as cut short (not
      // charged, due at once): a stop that waited for them could outlast the process's own budget.
      if (!(await withinDeadline(stopped, CALLS_IN_FLIGHT_GRACE_MS, false))) {
        logger.warn({ in_flight: deliverer.inFlight }, "stopping: calls to 1C still in flight are cut short");
        onec.abortCalls();
        await stopped;
      }
      await onec.close();
      await register.close();
    })();
    return closing;
  };
  return { owner, register, writability, onec, deliverer, close };
}

/**
 * /metrics on a listener of its own (METRICS_PORT), or undefined when the
 * main listener serves it. Built here, listened on by listenForMetrics. The
 * metrics are asked for only when served: a worker without METRICS_PORT
 * builds none (no registry, no event-loop and GC collectors, no listener on
 * its deliverer).
 */
export function metricsAppFor(
  config: GatewayConfig,
  metrics: () => GatewayMetrics,
  logger: Logger,
): FastifyInstance | undefined {
  if (config.metrics.listener.kind !== "own") return undefined;
  return buildMetricsApp({ metrics: metrics(), access: config.metrics.access, token: config.metricsToken, logger });
}

/** Starts the metrics listener at METRICS_HOST:METRICS_PORT; its URL, for the log. */
export async function listenForMetrics(app: FastifyInstance, config: GatewayConfig): Promise<string> {
  const { listener } = config.metrics;
  if (listener.kind !== "own") throw new Error("/metrics is served by the main listener");
  const url = await app.listen({ host: listener.host, port: listener.port });
  app.log.info({ url: `${url}/metrics`, access: config.metrics.access }, "metrics listening");
  return url;
}

export interface Gateway extends DeliveryStack {
  app: FastifyInstance;
  /** The metrics listener with METRICS_PORT (main.ts listens on it), undefined otherwise. */
  metricsApp: FastifyInstance | undefined;
  acceptor: OrderPaidAcceptor;
  metrics: GatewayMetrics;
  /** From now on /readyz answers 503 while everything else is served as before; close() follows. */
  drain(): void;
}

/**
 * Counts what the deliverer does; reads the backlog from the register when scraped. `senders` and
 * `sources` are those the server takes requests from (a worker takes none): their series start at 0.
 */
export function createMetrics(
  stack: DeliveryStack,
  now: () => number,
  sources: readonly SourceSettings[] = [],
  senders: readonly string[] = [],
): GatewayMetrics {
  const metrics = new GatewayMetrics({
    backlog: () => stack.register.backlog(),
    breakerState: () => stack.deliverer.breakerState,
    now,
    webhookSources: () => sources,
    senders: () => senders,
  });
  stack.deliverer.on("attempted", ({ outcome, durationMs, record }) => {
    metrics.attempt(outcome, durationMs);
    if (outcome !== "lease_lost" && record.status === EventStatus.FAILED_FINAL) {
      metrics.failedFinal(record.lastErrorClass ?? "unknown");
    }
  });
  return metrics;
}

/** The senders' ids the orders route answers as: the configured ones, or `default` when anonymous. */
function sendersOf(config: GatewayConfig): string[] {
  if (config.senders.length === 0 && config.allowAnonymous) return [DEFAULT_SENDER];
  return config.senders.map((sender) => sender.id);
}

/** The server: HTTP edge plus, unless DELIVERER=off, the deliverer in the same process. */
export async function createGateway(config: GatewayConfig, logger: Logger): Promise<Gateway> {
  if (config.senders.length === 0 && config.sources.length === 0 && !config.allowAnonymous) {
    throw new ConfigError(
      'no senders configured: set SENDER_TOKENS or SENDERS_FILE (or SOURCES_FILE for platform webhooks), or ALLOW_ANONYMOUS=true to accept unauthenticated traffic as the sender "default"',
    );
  }
  if (config.senders.length === 0 && config.allowAnonymous) {
    logger.warn('ALLOW_ANONYMOUS=true: every request is accepted without a token, as the sender "default"');
  }
  const now = Date.now;
  const stack = await createDeliveryStack(config, logger, now);
  const deliverer = config.deliverer ? stack.deliverer : undefined;
  const metrics = createMetrics(stack, now, config.sources, sendersOf(config));
  const purger = new Purger({
    register: stack.register,
    now,
    log: logger,
    retentionMs: config.retentionMs,
    intervalMs: config.purgeIntervalMs,
  });
  const acceptor = new OrderPaidAcceptor(stack.register, {
    syncWaitMs: config.syncWaitMs,
    now,
    ...(deliverer === undefined
      ? {}
      : {
          deliveryActive: () => deliverer.delivering,
          // Only SQLite's single writer runs the claim after the reservation, in its commit;
          // on PostgreSQL the claim would race the uncommitted insert and find nothing, so
          // there the register's notice of the committed event expedites it.
          ...(config.database.kind === "sqlite"
            ? { expedite: (sender: string, eventId: string) => deliverer.expedite(sender, eventId) }
            : {}),
        }),
  });
  let draining = false;
  const app = buildApp({
    draining: () => draining,
    acceptor,
    register: stack.register,
    logger,
    bodyLimit: config.bodyLimit,
    webhookBodyLimit: config.webhookBodyLimit,
    retentionMs: config.retentionMs,
    requestTimeoutMs: config.requestTimeoutMs,
    trustProxy: config.trustProxy,
    consoleSession: config.consoleSession,
    adminToken: config.adminToken,
    operators: config.operators,
    senders: config.senders,
    anonymous: config.senders.length === 0 && config.allowAnonymous,
    sources: config.sources,
    rateLimit: { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs },
    metrics,
    metricsScrape:
      config.metrics.listener.kind === "own"
        ? "elsewhere"
        : { access: config.metrics.access, token: config.metricsToken },
    now,
  });
  const metricsApp = metricsAppFor(config, () => metrics, logger);
  app.addHook("preClose", async () => acceptor.stopWaiting());
  app.addHook("onReady", async () => {
    stack.writability.start();
    deliverer?.start();
    purger.start();
  });

  let closing: Promise<void> | undefined;
  const close = () => {
    // Stop taking requests first; then let running attempts write their outcome.
    closing ??= Promise.all([app.close(), purger.stop(), metricsApp?.close()]).then(stack.close);
    return closing;
  };
  const drain = () => {
    draining = true;
  };
  return { ...stack, app, metricsApp, acceptor, metrics, drain, close };
}
