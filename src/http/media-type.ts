/**
 * What a request body must be labelled to be read: JSON (application/json or
 * any application/*+json), in UTF-8, without a content coding. Pure: the
 * JSON body parser asks, and the answer says why a body is refused.
 */

export interface MediaType {
  /** Lower-cased. */
  type: string;
  /** Lower-cased. */
  subtype: string;
  /** Names lower-cased, values unquoted, in the order sent, repeats kept. */
  parameters: Array<[string, string]>;
}

export type BodyHeadersVerdict =
  | { ok: true }
  | { ok: false; reason: "content-coding" | "media-type" | "charset"; detail: string };

/** The content codings the gateway reads: none (RFC 9110 §8.4.1). */
export const ACCEPTED_CONTENT_CODING = "identity";

/** Labels of UTF-8 (WHATWG Encoding's "utf8" included: some clients send it). */
const UTF8_CHARSETS = new Set(["utf-8", "utf8"]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Checks the labels of a JSON body: Content-Encoding first (a coded body
 * cannot be read at all), then the media type, then its charset. RFC 8259
 * §8.1: JSON exchanged between systems is UTF-8, so any other charset is a
 * body we would misread.
 */
export function checkJsonBodyHeaders(
  contentType: string | undefined,
  contentEncoding: string | undefined,
): BodyHeadersVerdict {
  if (contentEncoding !== undefined) {
    const codings = contentEncoding
      .split(",")
      .map((coding) => coding.trim().toLowerCase())
      .filter((coding) => coding !== "");
    const coded = codings.find((coding) => coding !== ACCEPTED_CONTENT_CODING);
    if (coded !== undefined) {
      return {
        ok: false,
        reason: "content-coding",
        detail: `Content-Encoding ${quote(contentEncoding)} is not supported; send the body uncompressed (Accept-Encoding: ${ACCEPTED_CONTENT_CODING}). Nothing was recorded`,
      };
    }
  }
  if (contentType === undefined) {
    return {
      ok: false,
      reason: "media-type",
      detail: "the body has no Content-Type; send the event as JSON with Content-Type: application/json",
    };
  }
  const media = parseMediaType(contentType);
  if (media === undefined || !isJson(media)) {
    return {
      ok: false,
      reason: "media-type",
      detail: `Content-Type ${quote(contentType)} is not JSON; send the event with Content-Type: application/json`,
    };
  }
  for (const [name, value] of media.parameters) {
    if (name === "charset" && !UTF8_CHARSETS.has(value.toLowerCase())) {
      return {
        ok: false,
        reason: "charset",
        detail: `charset ${quote(value)} is not supported: JSON is UTF-8 (RFC 8259 §8.1); send the body in UTF-8, with charset=utf-8 or no charset`,
      };
    }
  }
  return { ok: true };
}

function isJson(media: MediaType): boolean {
  if (media.type !== "application") return false;
  return media.subtype === "json" || (media.subtype.length > 5 && media.subtype.endsWith("+json"));
}

/**
 * RFC 9110 §8.3.1: `type "/" subtype *( OWS ";" OWS [ name "=" value ] )`,
 * a value being a token or a quoted-string. undefined when it is not one.
 */
export function parseMediaType(value: string): MediaType | undefined {
  const text = value.trim();
  const slash = text.indexOf("/");
  const semicolon = text.indexOf(";");
  const end = semicolon === -1 ? text.length : semicolon;
  if (slash === -1 || slash > end) return undefined;
  const type = text.slice(0, slash);
  const subtype = text.slice(slash + 1, end).replace(/[ \t]+$/, "");
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return undefined;

  const parameters: Array<[string, string]> = [];
  let i = end;
  while (i < text.length) {
    // Here text[i] is ";".
    i = skipWhitespace(text, i + 1);
    if (i === text.length || text[i] === ";") continue;
    const equals = text.indexOf("=", i);
    if (equals === -1) return undefined;
    const name = text.slice(i, equals);
    if (!TOKEN.test(name)) return undefined;
    const read = text[equals + 1] === '"' ? readQuoted(text, equals + 1) : readToken(text, equals + 1);
    if (read === undefined) return undefined;
    parameters.push([name.toLowerCase(), read.value]);
    i = skipWhitespace(text, read.end);
    if (i < text.length && text[i] !== ";") return undefined;
  }
  return { type: type.toLowerCase(), subtype: subtype.toLowerCase(), parameters };
}

function skipWhitespace(text: string, from: number): number {
  let i = from;
  while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
  return i;
}

function readToken(text: string, from: number): { value: string; end: number } | undefined {
  let end = from;
  while (end < text.length && text[end] !== ";" && text[end] !== " " && text[end] !== "\t") end++;
  const value = text.slice(from, end);
  return TOKEN.test(value) ? { value, end } : undefined;
}

/** A quoted-string from its opening quote; quoted-pairs unescaped (RFC 9110 §5.6.4). */
function readQuoted(text: string, from: number): { value: string; end: number } | undefined {
  let value = "";
  for (let i = from + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) return { value, end: i + 1 };
    if (c === 0x5c /* \ */) {
      i++;
      if (i === text.length) return undefined;
      value += text[i];
    } else if (c === 0x09 || c >= 0x20) {
      if (c === 0x7f) return undefined;
      value += text[i];
    } else return undefined;
  }
  return undefined;
}

/** A header value in a detail: quoted, and short enough to read. */
function quote(value: string): string {
  return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value);
}
