import { randomUUID } from "node:crypto";
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyBaseLogger } from "fastify";
import { type Answer, problemAnswer } from "./answers.ts";
import { CORRELATION_HEADER, correlationIdOf } from "./correlation.ts";

/**
 * Errors Node's HTTP parser meets before Fastify sees a request (headers too
 * large, a body too slow, garbage on the wire) still get a problem document
 * with a correlation id, instead of Fastify's bare JSON.
 */
export function clientErrorWriter(limits: { maxHeaderBytes: number; requestTimeoutMs: number }) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    // A reset connection has no one left to answer.
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const correlationId = randomUUID();
    const answer = answerFor(error.code, correlationId, limits);
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
          `Content-Type: ${answer.contentType}\r\nContent-Length: ${Buffer.byteLength(answer.body)}\r\n` +
          `X-Correlation-ID: ${correlationId}\r\nConnection: close\r\n\r\n${answer.body}`,
      );
    }
    socket.destroy(error);
  };
}

function answerFor(
  code: string | undefined,
  correlationId: string,
  limits: { maxHeaderBytes: number; requestTimeoutMs: number },
): Answer {
  if (code === "HPE_HEADER_OVERFLOW") {
    return problemAnswer("GW_ERR_HEADERS_TOO_LARGE", correlationId, {
      detail: `the request headers exceed ${limits.maxHeaderBytes} bytes`,
    });
  }
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return problemAnswer("GW_ERR_REQUEST_TIMEOUT", correlationId, {
      detail: `the whole request did not arrive within ${limits.requestTimeoutMs} ms; send it again with the same event_id`,
    });
  }
  return problemAnswer("GW_ERR_BAD_REQUEST", correlationId, { detail: "the request is not valid HTTP/1.1" });
}

/**
 * Node's `checkExpectation`: a request with an Expect other than
 * 100-continue, which Node would otherwise answer with a bare 417 (RFC 9110
 * §10.1.1). It never reaches Fastify, so nothing of it is read or recorded.
 */
export function expectationFailedWriter(log: FastifyBaseLogger) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const correlationId = correlationIdOf(request);
    const expect = String(request.headers.expect);
    const answer = problemAnswer("GW_ERR_EXPECTATION_FAILED", correlationId, {
      detail: `Expect ${JSON.stringify(expect.slice(0, 100))} is not supported; send the request without it, or with Expect: 100-continue. Nothing was recorded`,
    });
    response.writeHead(answer.status, {
      ...answer.headers,
      "content-type": answer.contentType,
      "content-length": Buffer.byteLength(answer.body),
      [CORRELATION_HEADER]: correlationId,
      // The body the request may still send is not read.
      connection: "close",
    });
    response.end(answer.body);
    log.info(
      { correlation_id: correlationId, method: request.method, url: request.url, status: answer.status },
      "request completed",
    );
  };
}
