import { fullFormats } from "ajv-formats/dist/formats.js";

const fullDateTime = stringValidator(fullFormats["date-time"]);

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Where the zone begins, after YYYY-MM-DDTHH:MM:SS: Z, or an ±HH:MM offset six characters long. */
const ZONE_AT = 19;

/**
 * JSON Schema's "date-time" exactly as ajv-formats' full mode checks it,
 * without its allocations. That check splits the string and runs two
 * capturing regular expressions: some 2 KB of garbage and over a µs for an
 * event's three timestamps, on every new event. The shape an event's
 * timestamps take (the schema's pattern: YYYY-MM-DDTHH:MM:SS and Z or an
 * ±HH:MM offset) is read here digit by digit, with the same ranges, leap
 * years and leap seconds; any other string, fractions of a second included,
 * goes to ajv-formats' own function. test/unit/date-time-format.test.ts
 * holds the two to the same answer.
 */
export function isDateTime(text: string): boolean {
  const fixedOffset = text.length === ZONE_AT + 6;
  if (!(text.length === ZONE_AT + 1 || fixedOffset) || !hasPlainShape(text, fixedOffset)) return fullDateTime(text);
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const monthDays = month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month] ?? 0);
  if (month < 1 || month > 12 || day < 1 || day > monthDays) return false;
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  const sign = text.charCodeAt(ZONE_AT) === 0x2d /* - */ ? -1 : 1;
  const offsetHours = fixedOffset ? digits(text, ZONE_AT + 1, 2) : 0;
  const offsetMinutes = fixedOffset ? digits(text, ZONE_AT + 4, 2) : 0;
  if (offsetHours > 23 || offsetMinutes > 59) return false;
  if (hour <= 23 && minute <= 59 && second < 60) return true;
  // A leap second: 23:59:60 in UTC, whatever the offset.
  const utcMinute = minute - offsetMinutes * sign;
  const utcHour = hour - offsetHours * sign - (utcMinute < 0 ? 1 : 0);
  return (utcHour === 23 || utcHour === -1) && (utcMinute === 59 || utcMinute === -1) && second < 61;
}

/** YYYY-MM-DDTHH:MM:SS, then Z (or z) or, with `fixedOffset`, +HH:MM or -HH:MM. */
function hasPlainShape(text: string, fixedOffset: boolean): boolean {
  for (let i = 0; i < ZONE_AT; i++) {
    const c = text.charCodeAt(i);
    const ok =
      i === 4 || i === 7
        ? c === 0x2d /* - */
        : i === 10
          ? c === 0x54 /* T */ || c === 0x74 /* t */
          : i === 13 || i === 16
            ? c === 0x3a /* : */
            : isDigit(c);
    if (!ok) return false;
  }
  const zone = text.charCodeAt(ZONE_AT);
  if (!fixedOffset) return zone === 0x5a /* Z */ || zone === 0x7a; /* z */
  return (
    (zone === 0x2b /* + */ || zone === 0x2d) /* - */ &&
    isDigit(text.charCodeAt(ZONE_AT + 1)) &&
    isDigit(text.charCodeAt(ZONE_AT + 2)) &&
    text.charCodeAt(ZONE_AT + 3) === 0x3a /* : */ &&
    isDigit(text.charCodeAt(ZONE_AT + 4)) &&
    isDigit(text.charCodeAt(ZONE_AT + 5))
  );
}

function digits(text: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) value = value * 10 + (text.charCodeAt(i) - 0x30);
  return value;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

function stringValidator(format: unknown): (text: string) => boolean {
  const validate = (format as { validate?: unknown } | undefined)?.validate;
  if (typeof validate !== "function") throw new Error("ajv-formats has no date-time validator");
  return (text) => validate(text) === true;
}
