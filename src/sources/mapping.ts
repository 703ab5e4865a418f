import { fullFormats } from "ajv-formats/dist/formats.js";
import { formatMinorUnits } from "../domain/money.ts";
import type { OrderPaidEvent } from "../domain/order-paid.ts";
import type { SourceSettings } from "./port.ts";

/**
 * What every adapter needs to turn a platform's order into our event, in one
 * place: exact money, SKUs through the sender's map, line prices that add up
 * to the cent, and the lenient reading of a customer (a platform may hide
 * names and contacts; our schema requires only a name).
 */

/** A payment that cannot be mapped: the delivery is kept as unmapped, with `message` as the reason. */
export class MappingError extends Error {
  override readonly name = "MappingError";
}

/**
 * A platform's value as a reason quotes it: a scalar as JSON (a string cut
 * at 80 characters), an object or an array by its kind. Never a nested
 * value whole: its text may run to megabytes, and JSON.stringify throws on
 * nesting deeper than the stack, which would turn a bad payload into a 500.
 */
export function quoted(value: unknown): string {
  if (typeof value === "string") {
    return JSON.stringify(value.length > QUOTED_LENGTH ? `${value.slice(0, QUOTED_LENGTH)}…` : value);
  }
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) return "an object";
  return String(value);
}

const QUOTED_LENGTH = 80;

/**
 * A platform's amount ("89.99", "0.9", "1399", 24450, 70.02) in minor units
 * (cents). More than two decimals, a negative or a non-number is refused: no
 * amount is ever rounded here.
 */
export function minorUnits(amount: unknown, what: string): bigint {
  // Most amounts are written with two decimals: their digits without the point, with no match array to collect.
  if (typeof amount === "string" && TWO_DECIMALS.test(amount)) return BigInt(amount.slice(0, -3) + amount.slice(-2));
  const text = typeof amount === "number" && Number.isFinite(amount) ? String(amount) : amount;
  const match = typeof text === "string" ? DECIMAL.exec(text.trim()) : null;
  if (match === null) throw new MappingError(`${what} is not an amount: ${quoted(amount)}`);
  const whole = match[1] as string;
  const fraction = match[2] ?? "";
  if (fraction.length > 2 && /[1-9]/.test(fraction.slice(2))) {
    throw new MappingError(`${what} has more than two decimals: ${quoted(amount)}`);
  }
  return BigInt(whole) * 100n + BigInt(fraction.slice(0, 2).padEnd(2, "0"));
}

const DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/;
const TWO_DECIMALS = /^[0-9]+\.[0-9]{2}$/;

/** Minor units as our money string ("1890.00"); negative is a mapping error. */
export function money(minor: bigint, what: string): string {
  if (minor < 0n) throw new MappingError(`${what} comes out negative (${minor} minor units)`);
  return formatMinorUnits(minor);
}

export type Item = OrderPaidEvent["order"]["items"][number];

/**
 * One platform line as our items: `quantity` units that cost `lineTotal`
 * together (after discounts, with tax as the sender books it). When the
 * total does not divide by the quantity, the line splits in two at prices one
 * cent apart, so that the items still add up to the line to the cent:
 * 3 units for 100.00 are 2 × 33.33 and 1 × 33.34.
 */
export function itemsForLine(line: {
  sku: string;
  name: string | undefined;
  quantity: number;
  lineTotal: bigint;
}): Item[] {
  const { sku, quantity, lineTotal } = line;
  if (!Number.isSafeInteger(quantity) || quantity < 1) {
    throw new MappingError(`the line with SKU "${sku}" has quantity ${quantity}`);
  }
  const count = BigInt(quantity);
  const unit = lineTotal / count;
  const dearer = Number(lineTotal % count);
  const name = line.name === undefined || line.name === "" ? undefined : line.name.slice(0, 1024);
  // Keys in canonical order (fingerprint.ts writes an event so built with JSON.stringify).
  const item = (units: number, price: bigint): Item =>
    name === undefined
      ? { price: money(price, `the price of "${sku}"`), quantity: units, sku }
      : { name, price: money(price, `the price of "${sku}"`), quantity: units, sku };
  const items: Item[] = [];
  if (quantity - dearer > 0) items.push(item(quantity - dearer, unit));
  if (dearer > 0) items.push(item(dearer, unit + 1n));
  return items;
}

/**
 * `amount` (minor units, not negative) shared out over `weights` in proportion:
 * each share rounded down, and the units the rounding left go one each to the
 * largest remainders (the earlier on a tie), so the shares add up to `amount`
 * exactly. `weights` are not negative and, unless `amount` is 0, not all 0.
 */
export function sharesOf(weights: readonly bigint[], amount: bigint): bigint[] {
  if (amount === 0n) return weights.map(() => 0n);
  const sum = weights.reduce((a, b) => a + b, 0n);
  if (amount < 0n || sum <= 0n || weights.some((weight) => weight < 0n)) {
    throw new Error(`cannot share ${amount} over the weights ${weights.join(", ")}`);
  }
  const shares = weights.map((weight) => (amount * weight) / sum);
  let left = amount - shares.reduce((a, b) => a + b, 0n);
  const byRemainder = weights
    .map((weight, index) => ({ index, remainder: (amount * weight) % sum }))
    .sort((a, b) => (a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1));
  for (const { index } of byRemainder) {
    if (left === 0n) break;
    shares[index] = (shares[index] as bigint) + 1n;
    left -= 1n;
  }
  return shares;
}

/**
 * An order-level discount spread over the lines in proportion to what each
 * line costs (sharesOf): the discounted lines add up to the lines less the
 * discount exactly, and no line goes below zero. A discount larger than the
 * lines is a mapping error, worded with `names`. Returns each line's total after it.
 */
export function spreadDiscount(
  lineTotals: readonly bigint[],
  discount: bigint,
  names: { discount: string; lines: string } = { discount: "the discount", lines: "the lines" },
): bigint[] {
  if (discount === 0n) return [...lineTotals];
  const sum = lineTotals.reduce((a, b) => a + b, 0n);
  if (discount > sum) {
    throw new MappingError(
      `${names.discount} ${money(discount, names.discount)} is more than ${names.lines} cost (${money(sum, "the sum")})`,
    );
  }
  const shares = sharesOf(lineTotals, discount);
  return lineTotals.map((total, index) => total - (shares[index] as bigint));
}

/**
 * The 1C article for a platform SKU: through the sender's map when there is
 * one (then an unlisted SKU is unknown), else the SKU itself. `fallbacks` are
 * the line's other ids ("variant:123"), tried in the map when the SKU is empty.
 */
export function articleFor(
  sku: string | null | undefined,
  settings: SourceSettings,
  fallbacks: readonly string[] = [],
): string {
  const given = typeof sku === "string" ? sku.trim() : "";
  const map = settings.skus;
  if (map !== undefined) {
    for (const candidate of given === "" ? fallbacks : [given]) {
      const article = map.get(candidate);
      if (article !== undefined) return article;
    }
    throw new MappingError(
      given === ""
        ? `a line has no SKU, and none of ${fallbacks.join(", ") || "its ids"} is in the sender's SKU map`
        : `unknown SKU "${given}": not in the sender's SKU map`,
    );
  }
  if (given === "")
    throw new MappingError("a line has no SKU (set one on the product, or map its id in the sender's SKU map)");
  if (given.length > 128) throw new MappingError(`SKU "${given.slice(0, 32)}…" is longer than 128 characters`);
  return given;
}

/** The currency booked: the payload's when the platform names one (it must be the configured one, if any), else the configured one. */
export function currencyFor(given: unknown, settings: SourceSettings): string {
  const named = typeof given === "string" && given !== "" ? given.toUpperCase() : undefined;
  if (named === undefined) {
    if (settings.currency === undefined)
      throw new MappingError("the payload names no currency and the sender has none configured");
    return settings.currency;
  }
  if (!/^[A-Z]{3}$/.test(named)) throw new MappingError(`currency ${quoted(given)} is not an ISO 4217 code`);
  if (settings.currency !== undefined && settings.currency !== named) {
    throw new MappingError(`currency ${named} is not the sender's configured ${settings.currency}`);
  }
  return named;
}

/** Our delivery.method for a platform's shipping method: the sender's map, else the platform's own, cut to 128. */
export function shippingMethodFor(given: string | undefined, settings: SourceSettings): string | undefined {
  if (given === undefined || given.trim() === "") return undefined;
  return (settings.shippingMethods?.get(given) ?? given.trim()).slice(0, 128);
}

export type Customer = OrderPaidEvent["order"]["customer"];

/**
 * Our customer from whatever the platform shows: the first non-empty name,
 * else the e-mail, else `fallbackName`. An e-mail or phone our schema would
 * refuse is left out rather than refusing a paid order over a contact.
 */
export function customerOf(parts: {
  id?: string | undefined;
  names: ReadonlyArray<string | null | undefined>;
  email?: string | null | undefined;
  phone?: string | null | undefined;
  fallbackName: string;
}): Customer {
  let name: string | undefined;
  for (const part of parts.names) {
    name = part?.trim();
    if (name !== undefined && name !== "") break;
    name = undefined;
  }
  const email = parts.email?.trim();
  const phone = parts.phone?.trim();
  const validEmail = email !== undefined && email.length <= 254 && EMAIL.test(email) ? email : undefined;
  // Keys in canonical order (fingerprint.ts writes an event so built with JSON.stringify).
  return {
    ...(validEmail === undefined ? {} : { email: validEmail }),
    ...(parts.id === undefined || parts.id === "" ? {} : { id: parts.id.slice(0, 128) }),
    name: (name ?? validEmail ?? parts.fallbackName).slice(0, 1024),
    ...(phone !== undefined && PHONE.test(phone) ? { phone } : {}),
  };
}

/**
 * The schema's own `format: email`: ajv-formats' "full" rule, which the validator uses
 * (validate-order-paid.ts). A looser rule here would let the schema refuse a paid order over its e-mail.
 */
const EMAIL = fullFormats.email as RegExp;
/** Kept equal to the schema's customer.phone pattern. */
const PHONE = /^\+?[0-9 ()-]{5,32}$/;

/** An address line from its parts, empty parts and anything but text left out; undefined when nothing is left. */
export function addressOf(parts: readonly unknown[]): string | undefined {
  let text = "";
  for (const part of parts) {
    const trimmed = typeof part === "string" ? part.trim() : "";
    if (trimmed !== "") text = text === "" ? trimmed : `${text}, ${trimmed}`;
  }
  return text === "" ? undefined : text.slice(0, 1024);
}

/** A header's single value: a repeated header is no value. */
export function header(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  name: string,
): string | undefined {
  const value = headers[name];
  return typeof value === "string" ? value : undefined;
}

/** The key's part made of a platform's id: event_id allows A-Z a-z 0-9 . _ : - only. */
export function keyPart(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]/g, "_");
}
