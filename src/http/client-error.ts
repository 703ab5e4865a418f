import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import type { ProblemCode } from "../errors/catalogue.ts";
import { type Answer, problemAnswer } from "./answers.ts";
import { CORRELATION_HEADER, correlationIdBeingRead, correlationIdOf } from "./correlation.ts";
import { withoutUrlSecret } from "./request-log.ts";
import { timeOrderedId } from "./time-ordered-id.ts";

/** What a 505 says the gateway does support (RFC 9110 §15.6.6). */
export const SPOKEN_VERSIONS = "the gateway speaks HTTP/1.1 (and reads HTTP/1.0)";

/** Told of each answer written here, outside Fastify's hooks: the metrics count it under no route. */
export type AnsweredOutside = (status: number) => void;

/**
 * Errors Node's HTTP parser meets before Fastify sees a request (headers too
 * large, a body too slow, garbage on the wire) still get a problem document
 * with a correlation id, instead of Fastify's bare JSON, and a log line that
 * carries it.
 */
export function clientErrorWriter(options: {
  maxHeaderBytes: number;
  requestTimeoutMs: number;
  log: FastifyBaseLogger;
  answered: AnsweredOutside;
}) {
  const { log, answered, ...limits } = options;
  return (error: Error & { code?: string }, socket: Socket): void => {
    // A reset connection has no one left to answer.
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    // Only a body that stopped arriving belongs to a request Fastify has seen; anything else
    // (headers too large, a bad request line) is a request no id was given to yet.
    const correlationId =
      (error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? correlationIdBeingRead(socket) : undefined) ?? timeOrderedId();
    const [code, detail] = parserRefusal(error.code, limits);
    const answer = problemAnswer(code, correlationId, { detail });
    if (!socket.writable) {
      socket.destroy(error);
      return;
    }
    socket.write(rawAnswerBytes(answer, correlationId));
    socket.destroy(error);
    answered(answer.status);
    log.info({ correlation_id: correlationId, status: answer.status, err_code: error.code }, "request refused unread");
  };
}

/**
 * CONNECT asks for a tunnel (RFC 9110 §9.3.6), which only a proxy gives: the
 * gateway implements the method for no resource, so 501 (RFC 9110 §9.1),
 * not a 405 with an Allow for a target that is no resource of ours. Node
 * hands the socket over without parsing further; nobody listening meant a
 * reset with no answer. The answer is written, the connection half-closed
 * (the client reads it to the end), and whatever follows is discarded.
 */
export function connectRefusalWriter(log: FastifyBaseLogger, answered: AnsweredOutside, lingerMs: number) {
  return (request: IncomingMessage, socket: Duplex): void => {
    const correlationId = correlationIdOf(request);
    const answer = problemAnswer("GW_ERR_METHOD_NOT_IMPLEMENTED", correlationId, {
      detail:
        "CONNECT opens tunnels, and the gateway is no proxy; send the request itself over HTTP/1.1. Nothing was recorded",
    });
    socket.on("error", () => socket.destroy());
    // Reading on lets the client's close arrive (and drops any tunnel bytes); a client that never closes is cut off.
    socket.resume();
    if (socket instanceof Socket) socket.setTimeout(lingerMs, () => socket.destroy());
    socket.end(rawAnswerBytes(answer, correlationId));
    answered(answer.status);
    logCompleted(log, request, correlationId, answer.status);
  };
}

/** A whole HTTP/1.1 answer for a socket Node no longer speaks HTTP on, ending with the connection's close. */
function rawAnswerBytes(answer: Answer, correlationId: string): string {
  return (
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
    `Content-Type: ${answer.contentType}\r\nContent-Length: ${Buffer.byteLength(answer.body)}\r\n` +
    `X-Correlation-ID: ${correlationId}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${answer.body}`
  );
}

/** What an error of Node's parser stands for, and what the client is told. */
function parserRefusal(
  code: string | undefined,
  limits: { maxHeaderBytes: number; requestTimeoutMs: number },
): [ProblemCode, string] {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return ["GW_ERR_HEADERS_TOO_LARGE", `the request headers exceed ${limits.maxHeaderBytes} bytes`];
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [
        "GW_ERR_REQUEST_TIMEOUT",
        `the whole request did not arrive within ${limits.requestTimeoutMs} ms; send it again with the same event_id`,
      ];
    // llhttp reads HTTP/0.9 to 1.1 and 2.0; any other version in the request line stops it (RFC 9112 §2.3, 1.2 included).
    case "HPE_INVALID_VERSION":
      return [
        "GW_ERR_HTTP_VERSION_NOT_SUPPORTED",
        `the request line's HTTP version is not one the gateway reads; ${SPOKEN_VERSIONS}`,
      ];
    // HTTP/2's connection preface (PRI * HTTP/2.0), sent by a client with prior knowledge of an h2c server.
    case "HPE_PAUSED_H2_UPGRADE":
      return ["GW_ERR_HTTP_VERSION_NOT_SUPPORTED", `HTTP/2 is not spoken on this listener; ${SPOKEN_VERSIONS}`];
    default:
      return ["GW_ERR_BAD_REQUEST", "the request is not valid HTTP/1.1"];
  }
}

/** The request's log line, for an answer written where Fastify writes none. */
function logCompleted(log: FastifyBaseLogger, request: IncomingMessage, correlationId: string, status: number): void {
  const url = request.url === undefined ? undefined : withoutUrlSecret(request.url);
  log.info({ correlation_id: correlationId, method: request.method, url, status }, "request completed");
}

/**
 * Node's `checkExpectation`: a request with an Expect other than
 * 100-continue, which Node would otherwise answer with a bare 417 (RFC 9110
 * §10.1.1). It never reaches Fastify, so nothing of it is read or recorded.
 */
export function expectationFailedWriter(log: FastifyBaseLogger, answered: AnsweredOutside) {
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
      "x-content-type-options": "nosniff",
      // The body the request may still send is not read.
      connection: "close",
    });
    response.end(answer.body);
    answered(answer.status);
    logCompleted(log, request, correlationId, answer.status);
  };
}
