import { type ProblemCode, problems, problemType } from "./catalogue.ts";

export const PROBLEM_CONTENT_TYPE = "application/problem+json; charset=utf-8";

/** An RFC 9457 problem document, with our extension members. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  correlation_id: string;
  retryable: boolean;
  instance?: string;
  event_id?: string;
  status_url?: string;
  errors?: readonly ProblemFieldError[];
}

/** One refused field: a JSON Pointer into the request body and why. */
export interface ProblemFieldError {
  path: string;
  rule: string;
  message: string;
}

export interface ProblemExtras {
  instance?: string;
  event_id?: string;
  status_url?: string;
  errors?: readonly ProblemFieldError[];
  /** Seconds; sent as Retry-After with retryable problems. */
  retryAfterSeconds?: number;
  /** Sent as Accept-Encoding: the content codings the gateway reads (RFC 9110 §12.5.3, §15.5.16). */
  acceptEncoding?: string;
}

/**
 * An expected failure that ends a request with a problem answer.
 * Thrown only at the HTTP edge; the register and delivery return values.
 */
export class GatewayProblem extends Error {
  readonly code: ProblemCode;
  readonly statusCode: number;
  readonly detail: string;
  readonly extras: ProblemExtras;

  constructor(code: ProblemCode, detail: string, extras: ProblemExtras = {}) {
    super(`${code}: ${detail}`);
    this.name = "GatewayProblem";
    this.code = code;
    this.statusCode = problems[code].status;
    this.detail = detail;
    this.extras = extras;
  }
}

export function problemDocument(
  code: ProblemCode,
  detail: string,
  correlationId: string,
  extras: ProblemExtras = {},
): ProblemDocument {
  const kind = problems[code];
  const doc: ProblemDocument = {
    type: problemType(code),
    title: kind.title,
    status: kind.status,
    detail,
    code,
    correlation_id: correlationId,
    retryable: kind.retryable,
  };
  if (extras.instance !== undefined) doc.instance = extras.instance;
  if (extras.event_id !== undefined) doc.event_id = extras.event_id;
  if (extras.status_url !== undefined) doc.status_url = extras.status_url;
  if (extras.errors !== undefined) doc.errors = extras.errors;
  return doc;
}
