import swagger from "@fastify/swagger";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { OrderPaidAcceptor } from "./accept/order-paid-acceptor.ts";
import { WebhookIntake } from "./accept/webhook-intake.ts";
import { configuredOperators, type OperatorEntry } from "./config/operators.ts";
import type { SenderEntry } from "./config/senders.ts";
import { authThrottle } from "./http/auth-throttle.ts";
import { clientErrorWriter, connectRefusalWriter, expectationFailedWriter } from "./http/client-error.ts";
import { CONSOLE_PATH, consoleRoutes } from "./http/console/console.ts";
import { correlationIdOfRequest } from "./http/correlation.ts";
import { deferredChildLogger } from "./http/deferred-child-logger.ts";
import { strictJsonBody } from "./http/json-body.ts";
import { openApiOptions } from "./http/openapi/document.ts";
import gracefulClose from "./http/plugins/graceful-close.ts";
import http1Conformance from "./http/plugins/http1-conformance.ts";
import requestContext from "./http/plugins/request-context.ts";
import { frameworkErrorHandler, problemAnswers } from "./http/problem-handler.ts";
import { RequestLog } from "./http/request-log.ts";
import { adminRoutes } from "./http/routes/admin.ts";
import { docsRoutes } from "./http/routes/docs.ts";
import { healthRoutes } from "./http/routes/health.ts";
import { type MetricsScrape, metricsRoutes } from "./http/routes/metrics.ts";
import { orderPaidRoutes } from "./http/routes/order-paid.ts";
import { problemTypeRoutes } from "./http/routes/problem-types.ts";
import { webhookRoutes } from "./http/routes/webhooks.ts";
import { securityHeaders } from "./http/security-headers.ts";
import { type GatewayMetrics, UNMATCHED_ROUTE } from "./observability/metrics.ts";
import type { EventRegister } from "./register/port.ts";
import { ADAPTERS } from "./sources/adapters.ts";
import type { SourceSettings } from "./sources/port.ts";

export interface AppDeps {
  acceptor: OrderPaidAcceptor;
  register: EventRegister;
  /** The admin routes exist only when this or `operators` is set. */
  adminToken: string | undefined;
  /** Everyone allowed on the admin routes (config.operators: OPERATORS_FILE and ADMIN_TOKEN); ADMIN_TOKEN alone when absent. */
  operators?: readonly OperatorEntry[];
  senders: readonly SenderEntry[];
  /**
   * Whether the senders' routes take requests without a token, as the sender
   * "default": by default only when no sender is configured (ALLOW_ANONYMOUS
   * decides in the gateway, so configuring only platforms never opens them).
   */
  anonymous?: boolean;
  /** The platforms whose webhooks are taken, per sender (SOURCES_FILE); none when absent. */
  sources?: readonly SourceSettings[];
  /** True from SIGTERM until the server stops listening (SHUTDOWN_DELAY_MS): /readyz says 503. */
  draining?: () => boolean;
  rateLimit: { max: number; windowMs: number };
  metrics: GatewayMetrics;
  /** Who may scrape /metrics here (config.metrics); "elsewhere" with METRICS_PORT. Absent: nobody (401). */
  metricsScrape?: MetricsScrape | "elsewhere";
  logger: Logger;
  bodyLimit: number;
  /** The platforms' webhooks: BODY_LIMIT when absent. */
  webhookBodyLimit?: number;
  /** How long the register keeps a finished event (RETENTION_HOURS): a platform's older payment is not recorded again. */
  retentionMs?: number;
  /** A request whose headers and body have not all arrived by then gets 408 (slow senders, slowloris). */
  requestTimeoutMs: number;
  /** TRUST_PROXY: the proxies whose X-Forwarded-For/-Proto/-Host are believed (TLS ends there); none when absent. */
  trustProxy?: readonly string[];
  /** The console's idle and absolute session timeouts (config.consoleSession); 30 minutes and 8 hours when absent. */
  consoleSession?: { idleMs: number; maxMs: number };
  now: () => number;
}

/** Header bytes a request may carry before Node refuses it (431). */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * The longest path segment the router matches (its default is 100, under the
 * 128 characters an event_id may have). 3 × 128 leaves room for an id written
 * wholly as %XX escapes; a longer segment is no event_id at all: 414.
 */
export const MAX_PATH_PARAM_LENGTH = 3 * 128;

/** Builds the HTTP edge. Never listens: main.ts and the tests do. */
export function buildApp(deps: AppDeps): FastifyInstance {
  // Answers Node's parser and server events give before any route is chosen: counted, as Fastify's are.
  const answeredOutside = (status: number) => deps.metrics.httpResponse(UNMATCHED_ROUTE, status);
  const app = Fastify({
    // pino's Logger is a FastifyBaseLogger; the cast keeps Fastify's default generic parameters.
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new RequestLog(),
    childLoggerFactory: deferredChildLogger,
    genReqId: correlationIdOfRequest,
    // Fastify's defaults coerce types and drop unknown properties in silence.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: true } },
    bodyLimit: deps.bodyLimit,
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    // The router's own refusals (bad % escape, over-long segment) as problem documents.
    frameworkErrors: frameworkErrorHandler(MAX_PATH_PARAM_LENGTH, answeredOutside),
    requestTimeout: deps.requestTimeoutMs,
    trustProxy: deps.trustProxy !== undefined && deps.trustProxy.length > 0 ? [...deps.trustProxy] : false,
    http: {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: Math.min(deps.requestTimeoutMs, 10_000),
      // Node looks for expired requests only this often (30 s by default).
      connectionsCheckingInterval: Math.min(1000, deps.requestTimeoutMs),
    },
    // Fastify's own 503 while closing is bare JSON; ours (below) is a problem document.
    return503OnClosing: false,
    clientErrorHandler: clientErrorWriter({
      maxHeaderBytes: MAX_HEADER_BYTES,
      requestTimeoutMs: deps.requestTimeoutMs,
      log: deps.logger as FastifyBaseLogger,
      answered: answeredOutside,
    }),
  });

  app.server.on("checkExpectation", expectationFailedWriter(app.log, answeredOutside));
  app.server.on("connect", connectRefusalWriter(app.log, answeredOutside, Math.min(deps.requestTimeoutMs, 10_000)));
  // Root-level concerns, registered in the order their onRequest hooks must run.
  app.register(requestContext, { metrics: deps.metrics });
  // Before anything that reads or changes state: a pipelined request waits here for the ones before it.
  app.register(http1Conformance);
  app.register(gracefulClose, { draining: deps.draining ?? (() => false) });
  app.register(strictJsonBody, { bodyLimit: deps.bodyLimit });
  app.register(problemAnswers);
  app.register(authThrottle, { counter: deps.register.hitCounter });
  app.register(securityHeaders);
  // Response schemas document the answers; they must not rewrite them. The
  // routes send pre-stringified JSON, which Fastify never serializes, and the
  // few objects (health, problem types) go out as JSON.stringify writes them:
  // no field dropped or reordered by a schema-built serializer.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Before the routes: it collects them as they are added, and /openapi.json is made from them.
  app.register(swagger, openApiOptions());
  app.register(healthRoutes, { register: deps.register, draining: deps.draining ?? (() => false) });
  app.register(docsRoutes);
  app.register(problemTypeRoutes);
  app.register(orderPaidRoutes, {
    bodyLimit: deps.bodyLimit,
    acceptor: deps.acceptor,
    register: deps.register,
    now: deps.now,
    senders: deps.senders,
    anonymous: deps.anonymous ?? deps.senders.length === 0,
    rateLimit: deps.rateLimit,
    metrics: deps.metrics,
  });
  // One intake for the platforms' routes and for support's remaps (the admin API, the console).
  const webhooks = {
    intake: new WebhookIntake({
      acceptor: deps.acceptor,
      deliveries: deps.register.sources,
      now: deps.now,
      ...(deps.retentionMs === undefined ? {} : { memoryMs: deps.retentionMs }),
    }),
    adapters: ADAPTERS,
    sources: deps.sources ?? [],
  };
  app.register(webhookRoutes, {
    ...webhooks,
    register: deps.register,
    metrics: deps.metrics,
    rateLimit: deps.rateLimit,
    bodyLimit: deps.webhookBodyLimit ?? deps.bodyLimit,
    now: deps.now,
  });
  const scrape: MetricsScrape | "elsewhere" = deps.metricsScrape ?? { access: "closed", token: undefined };
  if (scrape !== "elsewhere") app.register(metricsRoutes, { metrics: deps.metrics, ...scrape });
  const operators =
    deps.operators ?? configuredOperators({ file: undefined, adminToken: deps.adminToken, senders: deps.senders });
  if (operators.length > 0) {
    app.register(adminRoutes, { register: deps.register, operators, webhooks, now: deps.now });
    app.register(consoleRoutes, {
      prefix: CONSOLE_PATH,
      register: deps.register,
      operators,
      webhooks,
      sessionLifetime: deps.consoleSession,
      now: deps.now,
    });
  }
  return app;
}
