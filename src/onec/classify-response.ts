import { PROCESSING_ERROR } from "./contract/codes.ts";
import type { OnecEventLookup, OnecOutcome } from "./outcome.ts";

/**
 * Maps 1C's answer to an outcome. Pure; the HTTP call lives in client.ts.
 * Anything 1C did not clearly finish is retryable: the key makes a resend safe.
 */
const FINAL_REFUSALS: Readonly<Record<number, string>> = {
  400: "BAD_REQUEST",
  413: "TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  422: "REJECTED",
};

export function classifyResponse(httpStatus: number, bodyText: string, retryAfter: string | undefined): OnecOutcome {
  if (httpStatus === 200 || httpStatus === 201) {
    const order = readOrder(bodyText);
    if (order === undefined) {
      return {
        kind: "retryable",
        httpStatus,
        errorClass: "bad_answer",
        message: `1C answered ${httpStatus} without {order: {id, number}}: ${excerpt(bodyText)}`,
      };
    }
    return { kind: "delivered", httpStatus, order };
  }
  // The same bytes will get the same refusal: retrying a malformed, oversized or refused event cannot help.
  const refusal = FINAL_REFUSALS[httpStatus];
  if (refusal !== undefined) {
    const error = readError(bodyText);
    return {
      kind: "rejected",
      httpStatus,
      code: error?.code ?? refusal,
      message: error?.message ?? excerpt(bodyText),
    };
  }
  // Only 1C's own problem document says it ran the event and failed; a proxy's 500 page says nothing.
  if (httpStatus === 500) {
    const error = readError(bodyText);
    if (error?.code === PROCESSING_ERROR)
      return { kind: "errored", httpStatus, code: error.code, message: error.message };
  }
  if (httpStatus === 409) {
    return { kind: "conflict", httpStatus, message: readError(bodyText)?.message ?? excerpt(bodyText) };
  }
  if (httpStatus === 401 || httpStatus === 403) {
    return {
      kind: "unauthorized",
      httpStatus,
      message: `1C answered ${httpStatus}: check ONEC_USER and ONEC_PASSWORD`,
    };
  }
  const outcome: OnecOutcome = {
    kind: "retryable",
    httpStatus,
    errorClass:
      httpStatus >= 500 || httpStatus === 429 || httpStatus === 408 ? `http_${httpStatus}` : "unexpected_status",
    message: `1C answered ${httpStatus}: ${excerpt(bodyText)}`,
  };
  const retryAfterMs = parseRetryAfter(retryAfter);
  if (retryAfterMs !== undefined) outcome.retryAfterMs = retryAfterMs;
  return outcome;
}

/**
 * Maps 1C's answer to GET /v1/events/{key}. Strict on purpose: only the
 * contract's own 404 body proves 1C lacks the event; a proxy's 404 page proves nothing.
 */
export function classifyLookup(httpStatus: number, bodyText: string): OnecEventLookup {
  if (httpStatus === 200) {
    const order = readOrder(bodyText);
    if (order !== undefined) return { kind: "found", httpStatus, order };
    return {
      kind: "unknown",
      httpStatus,
      errorClass: "bad_answer",
      message: `1C answered 200 without {order: {id, number}}: ${excerpt(bodyText)}`,
    };
  }
  if (httpStatus === 404 && readError(bodyText)?.code === "NOT_FOUND") return { kind: "absent", httpStatus };
  return {
    kind: "unknown",
    httpStatus,
    errorClass: httpStatus >= 500 ? `http_${httpStatus}` : "unexpected_status",
    message: `1C answered ${httpStatus}: ${excerpt(bodyText)}`,
  };
}

/** The same network failures as a POST, for a lookup: 1C could not be asked. */
export function classifyLookupError(error: unknown): OnecEventLookup {
  const { errorClass, message } = classifyError(error);
  return { kind: "unknown", errorClass, message };
}

/** The error a call ends with when the process stops during it (OnecClient.abortCalls). */
export class GatewayStoppingError extends Error {
  override readonly name = "GatewayStoppingError";
  constructor() {
    super("the gateway stopped during the call");
  }
}

/** The error class of an attempt cut short by the process stopping: retried, not charged. */
export const STOPPING_ERROR_CLASS = "gateway_stopping";

/** Network failures: undici puts the reason in `code`, global fetch in `cause.code`. */
export function classifyError(error: unknown): Extract<OnecOutcome, { kind: "retryable" }> {
  if (error instanceof GatewayStoppingError) {
    return {
      kind: "retryable",
      errorClass: STOPPING_ERROR_CLASS,
      message: `${error.message}; 1C may have taken it, and the next attempt gets its order back`,
    };
  }
  const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (err?.name === "TimeoutError" || err?.name === "AbortError") {
    return { kind: "retryable", errorClass: "timeout", message: "1C did not answer in time" };
  }
  const code = err?.code ?? err?.cause?.code ?? "network_error";
  return { kind: "retryable", errorClass: code, message: `1C unreachable: ${err?.message ?? String(error)}` };
}

export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function readOrder(text: string): { id: string; number: string } | undefined {
  const parsed = tryParse(text) as { order?: { id?: unknown; number?: unknown } } | undefined;
  const order = parsed?.order;
  if (typeof order?.id !== "string" || typeof order.number !== "string") return undefined;
  return { id: order.id, number: order.number };
}

/** The contract's `{"error": {code, message}}`, or an RFC 9457 problem's top-level `code` and `detail`. */
function readError(text: string): { code: string; message: string } | undefined {
  const parsed = tryParse(text) as
    | { error?: { code?: unknown; message?: unknown }; code?: unknown; detail?: unknown }
    | undefined;
  const error = parsed?.error;
  if (typeof error?.code === "string") {
    return { code: error.code, message: typeof error.message === "string" ? error.message : error.code };
  }
  if (typeof parsed?.code !== "string") return undefined;
  return { code: parsed.code, message: typeof parsed.detail === "string" ? parsed.detail : parsed.code };
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function excerpt(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
