import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { type GatewayMetrics, UNMATCHED_ROUTE } from "../../observability/metrics.ts";
import { endRequestTrace, type RequestTrace, startRequestTrace } from "../../observability/trace-spans.ts";
import { DEFAULT_SENDER } from "../../register/senders.ts";
import { problemAnswer } from "../answers.ts";
import { CORRELATION_HEADER } from "../correlation.ts";
import { sendAnswer } from "../problem-handler.ts";
import { repeatedSingletonHeader } from "../singleton-headers.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The W3C trace context the request runs under (the shop's, or its server span's); undefined without one. */
    trace: RequestTrace | undefined;
  }
}

export interface RequestContextOptions {
  /** Counts every answer by route pattern and status code. */
  metrics: Pick<GatewayMetrics, "httpResponse">;
}

/**
 * What every request carries from its first hook: the correlation id echoed
 * on the answer, its trace context (and server span, when tracing is on),
 * the sender and event the request log line reports, and the
 * refusal of a header Node would have kept only one copy of; on its way out,
 * its count in the metrics. Wrapped with fastify-plugin: the decorators and
 * the hooks belong to the root, so every route sees them.
 */
async function requestContext(app: FastifyInstance, options: RequestContextOptions): Promise<void> {
  app.decorateRequest("sender", DEFAULT_SENDER);
  app.decorateRequest("logEvent", undefined);
  app.decorateRequest("trace", undefined);
  // Callback style, as every hook on the senders' path: an async hook costs each request a promise and a microtask.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header(CORRELATION_HEADER, request.id);
    // A malformed traceparent is ignored, never refused: the request goes on without it.
    request.trace = startRequestTrace(request.headers, request.method, request.routeOptions.url);
    // Before any route's hooks: sender authentication must not read a header Node picked one copy of.
    const repeated = repeatedSingletonHeader(request.raw.rawHeaders);
    if (repeated === undefined) {
      done();
      return;
    }
    // Answered here, so `done` is not called: the request goes no further.
    sendAnswer(
      reply,
      problemAnswer("GW_ERR_BAD_REQUEST", request.id, {
        detail: `the ${repeated} header appears more than once; send it once. Nothing was recorded`,
      }),
    );
  });
  const { metrics } = options;
  // A callback hook, not an async one: no promise per request for a counter bump.
  app.addHook("onResponse", (request, reply, done) => {
    metrics.httpResponse(request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode);
    if (request.trace !== undefined) endRequestTrace(request.trace, reply.statusCode);
    done();
  });
}

export default fp(requestContext, { name: "request-context", fastify: "5.x" });
