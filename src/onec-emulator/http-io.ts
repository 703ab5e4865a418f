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
  | "UNAVAILABLE"
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
