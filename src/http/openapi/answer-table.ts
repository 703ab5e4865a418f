import type { ProblemCode } from "../../errors/catalogue.ts";

export type DocumentedCode = ProblemCode;

export type OperationId =
  | "postOrderPaid"
  | "getOrderPaidStatus"
  | "listOrderPaidAttempts"
  | "getProblemType"
  | "getHealth"
  | "getReadiness"
  | "getMetrics"
  | "listEvents"
  | "getEvent"
  | "replayEvent"
  | "getOpenApi"
  | "getDocs";

export interface OperationAnswers {
  /** Statuses of answers that are not problems. */
  readonly success: readonly number[];
  /** Every problem the operation can answer with; grouped by status in the document. */
  readonly problems: readonly DocumentedCode[];
}

/**
 * Any route: Node's HTTP parser (malformed request, a bad % escape or a
 * header that must come once sent twice: 400; slow request 408; an Expect
 * other than 100-continue 417; headers over 16 KiB 431), a bug (500), and a
 * request that arrives while the gateway closes (503 + Retry-After).
 */
const EVERY_ROUTE = [
  "GW_ERR_BAD_REQUEST",
  "GW_ERR_REQUEST_TIMEOUT",
  "GW_ERR_EXPECTATION_FAILED",
  "GW_ERR_HEADERS_TOO_LARGE",
  "GW_ERR_INTERNAL",
  "GW_ERR_SHUTTING_DOWN",
] as const satisfies readonly DocumentedCode[];

/** A route with a path parameter: a segment over the router's limit is 414. */
const PATH_PARAMETER = ["GW_ERR_URI_TOO_LONG"] as const satisfies readonly DocumentedCode[];

/** The senders' routes: bearer token per sender, rate limit per sender. */
const SENDER_GATE = ["GW_ERR_UNAUTHORIZED", "GW_ERR_RATE_LIMITED"] as const satisfies readonly DocumentedCode[];

/** The admin routes: ADMIN_TOKEN missing (401) or wrong (403). */
const ADMIN_GATE = ["GW_ERR_UNAUTHORIZED", "GW_ERR_FORBIDDEN"] as const satisfies readonly DocumentedCode[];

/** A route with a JSON body goes through the strict JSON parser and the body limit. */
const JSON_BODY = [
  "GW_ERR_INVALID_JSON",
  "GW_ERR_DUPLICATE_JSON_KEY",
  "GW_ERR_BODY_TOO_LARGE",
  "GW_ERR_UNSUPPORTED_MEDIA_TYPE",
] as const satisfies readonly DocumentedCode[];

/**
 * THE answer map of the HTTP API: for each operation, every status it can
 * answer with. The document, /docs and the OpenAPI test are all built from
 * this table; a code added to catalogue.ts must be added here too (the test
 * fails until it is).
 */
export const ANSWER_TABLE: Readonly<Record<OperationId, OperationAnswers>> = {
  postOrderPaid: {
    success: [201, 200, 202],
    problems: [
      ...EVERY_ROUTE,
      ...SENDER_GATE,
      ...JSON_BODY,
      "GW_ERR_INVALID_EVENT_ID",
      "GW_ERR_IDEMPOTENCY_KEY_MISMATCH",
      "GW_ERR_EVENT_ID_CONFLICT",
      "GW_ERR_SCHEMA_VIOLATION",
      "GW_ERR_BUSINESS_RULES",
      "GW_ERR_ONEC_REJECTED",
      "GW_ERR_ONEC_CONFLICT",
      "GW_ERR_DELIVERY_ABANDONED",
      "GW_ERR_STORAGE_UNAVAILABLE",
    ],
  },
  getOrderPaidStatus: {
    success: [200],
    problems: [...EVERY_ROUTE, ...PATH_PARAMETER, ...SENDER_GATE, "GW_ERR_NOT_FOUND", "GW_ERR_STORAGE_UNAVAILABLE"],
  },
  listOrderPaidAttempts: {
    success: [200],
    problems: [...EVERY_ROUTE, ...PATH_PARAMETER, ...SENDER_GATE, "GW_ERR_NOT_FOUND", "GW_ERR_STORAGE_UNAVAILABLE"],
  },
  getProblemType: { success: [200], problems: [...EVERY_ROUTE, ...PATH_PARAMETER, "GW_ERR_NOT_FOUND"] },
  getHealth: { success: [200], problems: [...EVERY_ROUTE] },
  getReadiness: { success: [200], problems: [...EVERY_ROUTE, "GW_ERR_STORAGE_UNAVAILABLE"] },
  getMetrics: { success: [200], problems: [...EVERY_ROUTE] },
  listEvents: { success: [200], problems: [...EVERY_ROUTE, ...ADMIN_GATE, "GW_ERR_STORAGE_UNAVAILABLE"] },
  getEvent: {
    success: [200],
    problems: [
      ...EVERY_ROUTE,
      ...PATH_PARAMETER,
      ...ADMIN_GATE,
      "GW_ERR_NOT_FOUND",
      "GW_ERR_AMBIGUOUS_EVENT",
      "GW_ERR_STORAGE_UNAVAILABLE",
    ],
  },
  replayEvent: {
    success: [202],
    problems: [
      ...EVERY_ROUTE,
      ...PATH_PARAMETER,
      ...ADMIN_GATE,
      ...JSON_BODY,
      "GW_ERR_NOT_FOUND",
      "GW_ERR_REPLAY_REFUSED",
      "GW_ERR_AMBIGUOUS_EVENT",
      "GW_ERR_STORAGE_UNAVAILABLE",
    ],
  },
  getOpenApi: { success: [200], problems: [...EVERY_ROUTE] },
  getDocs: { success: [200], problems: [...EVERY_ROUTE] },
};

/** Response headers a problem carries besides X-Correlation-ID. */
export type ProblemHeader =
  | "Accept-Encoding"
  | "Location"
  | "Idempotent-Replayed"
  | "Retry-After"
  | "WWW-Authenticate"
  | "X-RateLimit-Limit"
  | "X-RateLimit-Remaining"
  | "X-RateLimit-Reset";

export const PROBLEM_HEADERS: Readonly<Partial<Record<DocumentedCode, readonly ProblemHeader[]>>> = {
  GW_ERR_UNSUPPORTED_MEDIA_TYPE: ["Accept-Encoding"],
  GW_ERR_EVENT_ID_CONFLICT: ["Location"],
  GW_ERR_REPLAY_REFUSED: ["Location"],
  GW_ERR_ONEC_REJECTED: ["Location", "Idempotent-Replayed"],
  GW_ERR_ONEC_CONFLICT: ["Location", "Idempotent-Replayed"],
  GW_ERR_DELIVERY_ABANDONED: ["Location", "Idempotent-Replayed"],
  GW_ERR_UNAUTHORIZED: ["WWW-Authenticate"],
  GW_ERR_RATE_LIMITED: ["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"],
  GW_ERR_STORAGE_UNAVAILABLE: ["Retry-After"],
  GW_ERR_SHUTTING_DOWN: ["Retry-After"],
};
