import type { IncomingMessage } from "node:http";
import { timeOrderedId } from "./time-ordered-id.ts";

export const CORRELATION_HEADER = "x-correlation-id";
const SAFE_CORRELATION_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * Fastify's requestIdHeader takes any header value unchecked (spaces, JSON,
 * 5 000 characters). We accept a sender's id only when it is short and safe
 * to echo into headers and logs, and make a UUIDv7 otherwise (time-ordered-id.ts).
 */
export function correlationIdOf(request: IncomingMessage): string {
  const value = request.headers[CORRELATION_HEADER];
  return typeof value === "string" && SAFE_CORRELATION_ID.test(value) ? value : timeOrderedId();
}

const kReading = Symbol("request being read");
type ReadingSocket = { [kReading]?: { request: IncomingMessage; correlationId: string } };

/**
 * correlationIdOf, remembered on the connection: a 408 for a body that stops
 * arriving is written by Node's parser on the bare socket (client-error.ts),
 * after Fastify gave the request its id, and should carry the same one.
 */
export function correlationIdOfRequest(request: IncomingMessage): string {
  const correlationId = correlationIdOf(request);
  (request.socket as ReadingSocket)[kReading] = { request, correlationId };
  return correlationId;
}

/** The id of the request the connection is still reading the body of, if any. */
export function correlationIdBeingRead(socket: object): string | undefined {
  const reading = (socket as ReadingSocket)[kReading];
  return reading !== undefined && !reading.request.complete ? reading.correlationId : undefined;
}
