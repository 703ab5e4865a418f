import { timingSafeEqual } from "node:crypto";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { MetricsAccess } from "../../config/metrics-exposure.ts";
import { sha256 } from "../../config/senders.ts";
import type { GatewayMetrics } from "../../observability/metrics.ts";
import { problemAnswer } from "../answers.ts";
import { CORRELATION_HEADER, correlationIdOf } from "../correlation.ts";
import { PROMETHEUS_MEDIA_TYPE } from "../openapi/json.ts";
import { problemAnswers, sendAnswer } from "../problem-handler.ts";
import { answers, EVERY_ROUTE, success } from "../schemas/responses.ts";
import { securityHeaders } from "../security-headers.ts";
import { bearerToken } from "../sender-auth.ts";

const metricsSchema = {
  operationId: "getMetrics",
  tags: ["operations"],
  security: [],
  summary: "Prometheus metrics",
  description:
    "The Prometheus text exposition format. With METRICS_TOKEN set, only `Authorization: Bearer <METRICS_TOKEN>` is answered (401 otherwise); without it, only a gateway listening on a loopback address and trusting no proxy answers, and every other answers 401. With METRICS_PORT, /metrics is served on that port alone and this listener answers 404.",
  response: answers({ 200: success("Metrics.", { schema: { type: "string" }, mediaType: PROMETHEUS_MEDIA_TYPE }) }, [
    ...EVERY_ROUTE,
    "GW_ERR_UNAUTHORIZED",
  ]),
};

/** Who may scrape (config.metrics.access), and METRICS_TOKEN for `token`. */
export interface MetricsScrape {
  access: MetricsAccess;
  token: string | undefined;
}

export interface MetricsRouteOptions extends MetricsScrape {
  metrics: Pick<GatewayMetrics, "render" | "contentType">;
}

/** The challenge of RFC 6750 §3, in the realm Prometheus's credentials are for. */
const REALM = 'Bearer realm="metrics"';

/**
 * Prometheus text. Who may read it is config/metrics-exposure.ts's rule:
 * the series name every sender and show the backlog, so it is not public.
 */
export async function metricsRoutes(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  const expected = options.access === "token" && options.token !== undefined ? sha256(options.token) : undefined;
  const refusal = scrapeRefusal(options.access, expected);
  app.get("/metrics", { schema: metricsSchema, onRequest: refusal }, async (_request, reply) => {
    const text = await options.metrics.render();
    return reply.header("cache-control", "no-store").type(options.metrics.contentType).send(text);
  });
}

/** The onRequest hook that refuses a scrape without the right bearer token; none when /metrics is open. */
function scrapeRefusal(access: MetricsAccess, expected: Buffer | undefined) {
  if (access === "open") return [];
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const token = bearerToken(request);
    if (expected !== undefined && token !== undefined && timingSafeEqual(sha256(token), expected)) return undefined;
    const detail =
      expected === undefined
        ? "this gateway serves /metrics only to loopback, or to Prometheus with METRICS_TOKEN: set METRICS_TOKEN (or METRICS_TOKEN_FILE) on the gateway and send it as a bearer token"
        : "send Authorization: Bearer <METRICS_TOKEN> (Prometheus: authorization: { credentials_file: … })";
    // RFC 6750 §3.1: a token was sent and is wrong.
    reply.header("www-authenticate", token === undefined ? REALM : `${REALM}, error="invalid_token"`);
    return sendAnswer(reply, problemAnswer("GW_ERR_UNAUTHORIZED", request.id, { detail }));
  };
}

export interface MetricsAppOptions extends MetricsRouteOptions {
  logger: Logger;
}

/**
 * A listener that serves /metrics and nothing else (METRICS_PORT): for the
 * server, so that no proxy in front of the API reaches it, and for `gateway
 * worker`, which has no HTTP server of its own. Scrapes are not logged: one
 * every 15 s would drown the log.
 */
export function buildMetricsApp(options: MetricsAppOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    disableRequestLogging: true,
    genReqId: correlationIdOf,
  });
  // As on the main listener (plugins/request-context.ts): the id, a client's when valid, echoed on every answer.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header(CORRELATION_HEADER, request.id);
    done();
  });
  app.register(problemAnswers);
  // nosniff on its answers too, as on the main listener's (docs/security.md: every answer).
  app.register(securityHeaders);
  // As in app.ts: the route's response schemas document it (in the main listener's /openapi.json), they do not serialize.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.register(metricsRoutes, options);
  return app;
}
