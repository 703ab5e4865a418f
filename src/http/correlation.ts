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
