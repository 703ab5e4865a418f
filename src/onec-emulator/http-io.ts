import type { IncomingMessage, ServerResponse } from "node:http";

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

export type ErrorCode =
  | "UNAUTHORIZED"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "PAYLOAD_TOO_LARGE"
  | "BAD_JSON"
  | "MISSING_IDEMPOTENCY_KEY"
  | "BAD_IDEMPOTENCY_KEY"
  | "ORDER_NOT_VALID"
  | "MAINTENANCE"
  | "BAD_EVENT"
  | "EVENT_ID_REUSED"
  | "UNKNOWN_SKU"
  | "CURRENCY_MISMATCH"
  | "UNAVAILABLE"
  | "PROCESSING_ERROR"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "BAD_FAULTS"
  | "INTERNAL";

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "content-type": JSON_CONTENT_TYPE,
    "content-length": String(Buffer.byteLength(text, "utf8")),
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  status: number,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error: { code, message } }, headers);
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json; charset=utf-8";

/**
 * 1C's answer for an error it cannot classify (contract 3): an RFC 9457 problem that also carries the
 * contract's `error`, so a reader of either shape finds the code and 1C's text.
 */
export function sendProcessingError(res: ServerResponse, message: string): void {
  const text = JSON.stringify({
    type: "https://github.com/onec-order-gateway/contract#processing-error",
    title: "1C could not process the event",
    status: 500,
    detail: message,
    code: "PROCESSING_ERROR",
    error: { code: "PROCESSING_ERROR", message },
  });
  res.writeHead(500, {
    "content-type": PROBLEM_CONTENT_TYPE,
    "content-length": String(Buffer.byteLength(text, "utf8")),
  });
  res.end(text);
}

export function sendNoContent(res: ServerResponse): void {
  res.writeHead(204);
  res.end();
}

/** 1C's HTTP services accept `application/json` and structured `+json` types alike. */
export function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const mediaType = (header.split(";", 1)[0] ?? "").trim().toLowerCase();
  return mediaType === "application/json" || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(mediaType);
}

/** Node joins repeated custom headers into one string but types them as maybe-array; this settles it. */
export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}
