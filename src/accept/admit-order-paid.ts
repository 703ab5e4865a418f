import { checkBusinessRules } from "../domain/business-rules.ts";
import { type Canonical, canonicalizeEvent } from "../domain/fingerprint.ts";
import { isValidEventId, type OrderPaidEvent } from "../domain/order-paid.ts";
import type { DecimalNumber } from "../domain/strict-json.ts";
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
 *
 * `decimalNumbers` are the numbers the body's text wrote with a fraction or
 * an exponent (from parseStrictJson): JSON.parse has already rounded them,
 * so `1.9999999999999999` would pass as the integer 2.
 */
export function admitOrderPaid(
  body: unknown,
  idempotencyKeyHeader: string | string[] | undefined,
  decimalNumbers: readonly DecimalNumber[] = [],
  canonicalize: (value: unknown) => Canonical = canonicalizeEvent,
): Admission {
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
          : 'event_id must be a string of 1-128 characters from A-Z a-z 0-9 . _ : -, and not "." or ".."',
    };
  }
  const keyRefusal = checkIdempotencyKey(idempotencyKeyHeader, eventId);
  if (keyRefusal !== undefined) return keyRefusal;
  const schema = checkOrderPaidSchema(body);
  const notation = integerNotationErrors(body, decimalNumbers);
  const nul = hasNulCharacter(body) ? nulCharacterErrors(body) : [];
  if (!schema.ok || notation.length > 0 || nul.length > 0) {
    const errors = [...(schema.ok ? [] : schema.errors), ...notation, ...nul];
    return {
      ok: false,
      code: "GW_ERR_SCHEMA_VIOLATION",
      detail: `${errors.length} field(s) do not match the order-paid schema`,
      errors,
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
    canonical = canonicalize(schema.event);
  } catch (error) {
    return { ok: false, code: "GW_ERR_INVALID_JSON", detail: `not I-JSON: ${(error as Error).message}`, eventId };
  }
  return { ok: true, event: schema.event, canonical };
}

/**
 * An integer written with a fraction or an exponent (`2.0`, `2e0`,
 * `1.9999999999999999`) is refused where it lands: its value is what
 * JSON.parse made of the text, not what the sender wrote. A number whose
 * value is not an integer is left to the schema's own `integer` rule, so it
 * is listed once.
 */
function integerNotationErrors(body: unknown, decimalNumbers: readonly DecimalNumber[]): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  for (const number of decimalNumbers) {
    if (!Number.isInteger(valueAt(body, number.pointer))) continue;
    errors.push({
      path: number.pointer,
      rule: "integer-notation",
      message: `must be written as an integer, without fraction or exponent (got ${number.text})`,
    });
  }
  return errors;
}

/**
 * Whether U+0000 is anywhere in the event: the check every request pays, so it builds no paths and
 * allocates nothing but its stack (a loop: a hostile body may nest 100 000 levels deep). Only an
 * event that has one is walked again for the paths (nulCharacterErrors).
 */
function hasNulCharacter(document: unknown): boolean {
  const pending: unknown[] = [document];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === "string") {
      if (value.includes("\u0000")) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
    } else if (typeof value === "object" && value !== null) {
      for (const key in value) {
        if (key.includes("\u0000")) return true;
        pending.push((value as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/**
 * U+0000 in any string or member name is refused on every backend: PostgreSQL's text cannot hold
 * it (the insert failed with a 500 the sender retried forever), 1C's strings end at it, and no
 * field of an order needs it.
 */
function nulCharacterErrors(document: unknown): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  const error = (at: string): ProblemFieldError => ({
    path: at === "" ? "/" : at,
    rule: "no-nul-character",
    message: "must not contain the character U+0000",
  });
  // A loop, not recursion: a hostile body may nest 100 000 levels deep.
  const pending: Array<[unknown, string]> = [[document, ""]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, pointer] = next;
    if (typeof value === "string") {
      if (value.includes("\u0000")) errors.push(error(pointer));
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      const at = `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
      if (key.includes("\u0000")) errors.push(error(at));
      pending.push([child, at]);
    }
  }
  return errors;
}

/** The value an RFC 6901 JSON Pointer made by parseStrictJson points at. */
function valueAt(document: unknown, pointer: string): unknown {
  let value = document;
  for (const token of pointer.split("/").slice(1)) {
    if (typeof value !== "object" || value === null) return undefined;
    const key = token.replaceAll("~1", "/").replaceAll("~0", "~");
    value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

/** The Idempotency-Key header, when sent, must name the body's event_id. */
export function checkIdempotencyKey(
  header: string | string[] | undefined,
  eventId: string,
): Extract<Admission, { ok: false }> | undefined {
  const headerKey = idempotencyKey(header);
  if (headerKey === undefined || headerKey === eventId) return undefined;
  return {
    ok: false,
    code: "GW_ERR_IDEMPOTENCY_KEY_MISMATCH",
    detail: `Idempotency-Key "${headerKey}" differs from event_id "${eventId}"; send the same value or omit the header`,
    eventId,
  };
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
