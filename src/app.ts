import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { OrderPaidAcceptor } from "./accept/order-paid-acceptor.ts";
import { problemAnswer } from "./http/answers.ts";
import { CORRELATION_HEADER, correlationIdOf } from "./http/correlation.ts";
import { registerStrictJsonParser } from "./http/json-body.ts";
import { registerProblemHandler } from "./http/problem-handler.ts";
import { RequestLog } from "./http/request-log.ts";
import { healthRoutes } from "./http/routes/health.ts";
import { orderPaidRoutes } from "./http/routes/order-paid.ts";
import { problemTypeRoutes } from "./http/routes/problem-types.ts";
import type { EventRegister } from "./register/port.ts";

export interface AppDeps {
  acceptor: OrderPaidAcceptor;
  register: EventRegister;
  logger: Logger;
  bodyLimit: number;
  now: () => number;
}

/** Header bytes a request may carry before Node refuses it (431). */
export const MAX_HEADER_BYTES = 16 * 1024;
/** A slow body (slowloris) is cut after this long (408). */
export const REQUEST_TIMEOUT_MS = 30_000;

/** Builds the HTTP edge. Never listens: main.ts and the tests do. */
export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    // pino's Logger is a FastifyBaseLogger; the cast keeps Fastify's default generic parameters.
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new RequestLog(),
    genReqId: correlationIdOf,
    bodyLimit: deps.bodyLimit,
    requestTimeout: REQUEST_TIMEOUT_MS,
    http: { maxHeaderSize: MAX_HEADER_BYTES },
    return503OnClosing: true,
    clientErrorHandler: writeClientError,
  });

  app.addHook("onRequest", async (request, reply) => {
    reply.header(CORRELATION_HEADER, request.id);
  });

  registerStrictJsonParser(app, deps.bodyLimit);
  registerProblemHandler(app);
  app.register(healthRoutes);
  app.register(problemTypeRoutes);
  app.register(orderPaidRoutes, { acceptor: deps.acceptor, register: deps.register, now: deps.now });
  return app;
}

/**
 * Errors Node's HTTP parser meets before Fastify sees a request (headers too
 * large, a body too slow, garbage on the wire) still get a problem document.
 */
function writeClientError(error: Error & { code?: string }, socket: import("node:net").Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const correlationId = crypto.randomUUID();
  const answer =
    error.code === "HPE_HEADER_OVERFLOW"
      ? problemAnswer("GW_ERR_HEADERS_TOO_LARGE", correlationId, { detail: `headers over ${MAX_HEADER_BYTES} bytes` })
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? problemAnswer("GW_ERR_REQUEST_TIMEOUT", correlationId, {
            detail: `the request did not arrive within ${REQUEST_TIMEOUT_MS} ms`,
          })
        : problemAnswer("GW_ERR_BAD_REQUEST", correlationId, { detail: "the request is not valid HTTP/1.1" });
  const body = Buffer.from(answer.body, "utf8");
  socket.end(
    `HTTP/1.1 ${answer.status} ${answer.status === 431 ? "Request Header Fields Too Large" : answer.status === 408 ? "Request Timeout" : "Bad Request"}\r\n` +
      `Content-Type: ${answer.contentType}\r\nContent-Length: ${body.length}\r\n` +
      `X-Correlation-ID: ${correlationId}\r\nConnection: close\r\n\r\n${answer.body}`,
  );
}
