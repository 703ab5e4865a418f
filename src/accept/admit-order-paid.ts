import { checkBusinessRules } from "../domain/business-rules.ts";
import { type Canonical, canonicalizeEvent } from "../domain/fingerprint.ts";
import { isValidEventId, type OrderPaidEvent } from "../domain/order-paid.ts";
import { checkOrderPaidSchema } from "../domain/validate-order-paid.ts";
import type { ProblemCode } from "../errors/catalogue.ts";
import type { ProblemFieldError } from "../errors/problem.ts";

export type Admission =
  | { ok: true; event: OrderPaidEvent; canonical: Canonical }
  | { ok: false; code: ProblemCode; detail: string; errors?: ProblemFieldError[]; eventId?: string };

/**
 * Everything decided before any transaction: the key, the shape, the rules,
 * the fingerprint. Pure. Nothing refused here is recorded, so a sender may fix
 * the event and send it again under the same event_id.
 */
export function admitOrderPaid(body: unknown, idempotencyKeyHeader: string | string[] | undefined): Admission {
  const eventId = (body as { event_id?: unknown } | null)?.event_id;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, code: "GW_ERR_INVALID_EVENT_ID", detail: "the body must be a JSON object with an event_id" };
  }
  if (!isValidEventId(eventId)) {
    return {
      ok: false,
      code: "GW_ERR_INVALID_EVENT_ID",
      detail:
        eventId === undefined
          ? "event_id is required"
          : "event_id must be a string of 1-128 characters from A-Z a-z 0-9 . _ : -",
    };
  }
  const headerKey = idempotencyKey(idempotencyKeyHeader);
  if (headerKey !== undefined && headerKey !== eventId) {
    return {
      ok: false,
      code: "GW_ERR_IDEMPOTENCY_KEY_MISMATCH",
      detail: `Idempotency-Key "${headerKey}" differs from event_id "${eventId}"; send the same value or omit the header`,
      eventId,
    };
  }
  const schema = checkOrderPaidSchema(body);
  if (!schema.ok) {
    return {
      ok: false,
      code: "GW_ERR_SCHEMA_VIOLATION",
      detail: `${schema.errors.length} field(s) do not match the order-paid schema`,
      errors: schema.errors,
      eventId,
    };
  }
  const violations = checkBusinessRules(schema.event);
  if (violations.length > 0) {
    return {
      ok: false,
      code: "GW_ERR_BUSINESS_RULES",
      detail: `${violations.length} business rule(s) violated`,
      errors: violations,
      eventId,
    };
  }
  let canonical: Canonical;
  try {
    canonical = canonicalizeEvent(schema.event);
  } catch (error) {
    return { ok: false, code: "GW_ERR_INVALID_JSON", detail: `not I-JSON: ${(error as Error).message}`, eventId };
  }
  return { ok: true, event: schema.event, canonical };
}

/**
 * The IETF draft sends the key as a structured-field string ("abc"); most
 * clients send it bare. Both are accepted; a repeated header never is.
 */
function idempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header)) return header.join(",");
  const trimmed = header.trim();
  return /^".*"$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
}
