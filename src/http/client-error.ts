import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { type Answer, problemAnswer } from "./answers.ts";

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
