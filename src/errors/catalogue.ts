/**
 * Every problem the gateway can answer with, in one table (RFC 9457).
 * The README's answer map and the tests read this table; add a code here
 * before answering with it anywhere else.
 */
export interface ProblemKind {
  readonly status: number;
  /** Last segment of the problem `type` URI. */
  readonly slug: string;
  readonly title: string;
  /** Whether the sender should retry the same request with the same event_id. */
  readonly retryable: boolean;
}

export const PROBLEM_TYPE_BASE = "/integration/v1/problems/";

export const problems = {
  GW_ERR_INVALID_JSON: {
    status: 400,
    slug: "invalid-json",
    title: "The request body is not valid JSON",
    retryable: false,
  },
  GW_ERR_DUPLICATE_JSON_KEY: {
    status: 400,
    slug: "duplicate-json-key",
    title: "The JSON body repeats a key in one object",
    retryable: false,
  },
  GW_ERR_INVALID_EVENT_ID: {
    status: 400,
    slug: "invalid-event-id",
    title: "event_id is missing or malformed",
    retryable: false,
  },
  GW_ERR_IDEMPOTENCY_KEY_MISMATCH: {
    status: 400,
    slug: "idempotency-key-mismatch",
    title: "The Idempotency-Key header differs from event_id",
    retryable: false,
  },
  GW_ERR_BAD_REQUEST: {
    status: 400,
    slug: "bad-request",
    title: "The request is malformed",
    retryable: false,
  },
  GW_ERR_WEBHOOK_MALFORMED: {
    status: 400,
    slug: "webhook-malformed",
    title: "The webhook's body is not in the platform's format",
    retryable: false,
  },
  GW_ERR_NOT_FOUND: {
    status: 404,
    slug: "not-found",
    title: "No such resource",
    retryable: false,
  },
  GW_ERR_METHOD_NOT_ALLOWED: {
    status: 405,
    slug: "method-not-allowed",
    title: "The URL does not take this method",
    retryable: false,
  },
  GW_ERR_REQUEST_TIMEOUT: {
    status: 408,
    slug: "request-timeout",
    title: "The request body did not arrive in time",
    retryable: true,
  },
  GW_ERR_EVENT_ID_CONFLICT: {
    status: 409,
    slug: "event-id-conflict",
    title: "This event_id was already used with another body",
    retryable: false,
  },
  GW_ERR_BODY_TOO_LARGE: {
    status: 413,
    slug: "body-too-large",
    title: "The request body is larger than the gateway accepts",
    retryable: false,
  },
  GW_ERR_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    slug: "unsupported-media-type",
    title: "The request body must be application/json in UTF-8, without a content coding",
    retryable: false,
  },
  GW_ERR_URI_TOO_LONG: {
    status: 414,
    slug: "uri-too-long",
    title: "The request URL is too long",
    retryable: false,
  },
  GW_ERR_EXPECTATION_FAILED: {
    status: 417,
    slug: "expectation-failed",
    title: "The gateway cannot meet the Expect header",
    retryable: false,
  },
  GW_ERR_SCHEMA_VIOLATION: {
    status: 422,
    slug: "schema-violation",
    title: "The event does not match the order-paid schema",
    retryable: false,
  },
  GW_ERR_BUSINESS_RULES: {
    status: 422,
    slug: "business-rules-violated",
    title: "The event breaks the order's business rules",
    retryable: false,
  },
  GW_ERR_ONEC_REJECTED: {
    status: 422,
    slug: "onec-rejected",
    title: "1C refused to create the order",
    retryable: false,
  },
  GW_ERR_ONEC_CONFLICT: {
    status: 422,
    slug: "onec-conflict",
    title: "1C already holds this event id with another body",
    retryable: false,
  },
  GW_ERR_DELIVERY_ABANDONED: {
    status: 502,
    slug: "delivery-abandoned",
    title: "The gateway stopped trying to deliver this event to 1C",
    retryable: false,
  },
  GW_ERR_REPLAY_REFUSED: {
    status: 409,
    slug: "replay-refused",
    title: "This event cannot be replayed now",
    retryable: false,
  },
  GW_ERR_REMAP_REFUSED: {
    status: 409,
    slug: "remap-refused",
    title: "This platform delivery cannot be mapped again",
    retryable: false,
  },
  GW_ERR_STILL_UNMAPPED: {
    status: 422,
    slug: "still-unmapped",
    title: "The platform delivery still does not map to an order",
    retryable: false,
  },
  GW_ERR_UNAUTHORIZED: {
    status: 401,
    slug: "unauthorized",
    title: "A valid bearer token is required",
    retryable: false,
  },
  GW_ERR_WEBHOOK_SIGNATURE: {
    status: 401,
    slug: "webhook-signature",
    title: "The webhook's signature or secret does not verify",
    retryable: false,
  },
  GW_ERR_FORBIDDEN: {
    status: 403,
    slug: "forbidden",
    title: "The token does not grant this",
    retryable: false,
  },
  GW_ERR_RATE_LIMITED: {
    status: 429,
    slug: "rate-limited",
    title: "Too many requests from this sender",
    retryable: true,
  },
  GW_ERR_AUTH_THROTTLED: {
    status: 429,
    slug: "too-many-failed-authentications",
    title: "Too many wrong tokens from this client or with this token",
    retryable: false,
  },
  GW_ERR_AMBIGUOUS_EVENT: {
    status: 409,
    slug: "ambiguous-event-id",
    title: "Several senders used this event_id",
    retryable: false,
  },
  GW_ERR_HEADERS_TOO_LARGE: {
    status: 431,
    slug: "headers-too-large",
    title: "The request headers are too large",
    retryable: false,
  },
  GW_ERR_INTERNAL: {
    status: 500,
    slug: "internal-error",
    title: "The gateway failed unexpectedly",
    retryable: true,
  },
  GW_ERR_METHOD_NOT_IMPLEMENTED: {
    status: 501,
    slug: "method-not-implemented",
    title: "The gateway does not implement this request method",
    retryable: false,
  },
  GW_ERR_HTTP_VERSION_NOT_SUPPORTED: {
    status: 505,
    slug: "http-version-not-supported",
    title: "The gateway does not support this HTTP version",
    retryable: false,
  },
  GW_ERR_STORAGE_UNAVAILABLE: {
    status: 503,
    slug: "storage-unavailable",
    title: "The gateway cannot record the event durably now",
    retryable: true,
  },
  GW_ERR_SHUTTING_DOWN: {
    status: 503,
    slug: "shutting-down",
    title: "The gateway is shutting down",
    retryable: true,
  },
} as const satisfies Record<string, ProblemKind>;

export type ProblemCode = keyof typeof problems;

/** Every code of the table, in its order. */
export const PROBLEM_CODES = Object.keys(problems) as readonly ProblemCode[];

export function problemType(code: ProblemCode): string {
  return PROBLEM_TYPE_BASE + problems[code].slug;
}
