import type { AttemptRecord, EventRecord } from "../register/port.ts";

/**
 * An event's body as a viewer sees it: every e-mail address and phone number
 * masked, everything else (order, items, sums, ids) as stored, so a 1C
 * administrator can match an event to its order without reading who bought it.
 * Pure: the stored body is not touched.
 */

type Kind = "email" | "phone";

/** A property whose name says what it holds: `email`, `e_mail`, `customer_email`, `phone`, `phones`, `phone_number`. */
const KIND_OF_KEY: readonly [RegExp, Kind][] = [
  [/e[-_]?mail/i, "email"],
  // Form builders name the field tel or mobile as often as phone (Tilda's Russian forms: Телефон); not "hotel".
  [/phone|mobile|^tel$|^tel[-_ ]|[-_ ]tel$|телефон/i, "phone"],
];

/** An address written anywhere in free text (a comment, an address line). */
const EMAIL_IN_TEXT = /[^\s@<>()[\]",;:]+@[^\s@<>()[\]",;:]+\.[^\s@<>()[\]",;:]+/g;

/** Digits a masked phone keeps at its end, enough to tell two numbers apart on a call. */
const PHONE_DIGITS_KEPT = 2;

export function maskPersonalData(value: unknown): unknown {
  return masked(value, undefined);
}

function masked(value: unknown, kind: Kind | undefined): unknown {
  if (typeof value === "string") return maskText(value, kind);
  // A phone sent as a JSON number is a phone all the same.
  if (typeof value === "number" && kind !== undefined) return maskText(String(value), kind);
  if (Array.isArray(value)) return value.map((item) => masked(item, kind));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, masked(inner, kind ?? kindOf(key))]));
  }
  return value;
}

/**
 * 1C's own texts as a viewer sees them (its error, its refusal, the answer recorded from it): a
 * configuration's fill check may quote the customer ("no INN for anna.smirnova@example.com"), so the
 * e-mail addresses in them are masked. A phone in free text is not told from other digits, and stays.
 */
export function maskFreeText(text: string): string {
  return text.replace(EMAIL_IN_TEXT, maskEmail);
}

/** An event's record as a viewer sees it: the texts that came from 1C masked (maskFreeText). */
export function maskedRecord(record: EventRecord): EventRecord {
  return {
    ...record,
    lastError: record.lastError === null ? null : maskFreeText(record.lastError),
    response: record.response === null ? null : { ...record.response, body: maskFreeText(record.response.body) },
  };
}

/** An attempt as a viewer sees it: its detail (1C's text, when 1C refused or failed) masked. */
export function maskedAttempt(attempt: AttemptRecord): AttemptRecord {
  return attempt.detail === null ? attempt : { ...attempt, detail: maskFreeText(attempt.detail) };
}

function kindOf(key: string): Kind | undefined {
  return KIND_OF_KEY.find(([pattern]) => pattern.test(key))?.[1];
}

function maskText(text: string, kind: Kind | undefined): string {
  if (kind === "email") return maskEmail(text);
  if (kind === "phone") return maskPhone(text);
  return maskFreeText(text);
}

/** `anna.smirnova@example.com` → `a***@example.com`: the first letter and the domain. */
export function maskEmail(address: string): string {
  if (address === "") return address;
  const at = address.lastIndexOf("@");
  if (at <= 0) return "***";
  return `${address.slice(0, 1)}***${address.slice(at)}`;
}

/** `+7 (900) 123-45-67` → `+* (***) ***-**-67`: the layout and the last two digits. */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, "").length;
  const hidden = digits > PHONE_DIGITS_KEPT * 2 ? digits - PHONE_DIGITS_KEPT : digits;
  let seen = 0;
  return phone.replace(/\d/g, (digit) => {
    seen += 1;
    return seen <= hidden ? "*" : digit;
  });
}
