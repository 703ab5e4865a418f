/**
 * JSON.parse silently keeps the last of two equal keys, so `{"a":1,"a":2}` and
 * `{"a":2}` would fingerprint alike while a sender meant something else.
 * It also rounds in silence: `1.9999999999999999` and `2.0` both become 2, so
 * an integer field could not tell them from `2`. We parse with the built-in
 * parser (fast, exact errors) and then scan the text once for repeated keys
 * and for numbers written with a fraction or an exponent, which are reported
 * with their JSON Pointers so that admission can refuse them where an
 * integer is due.
 */
export type StrictJsonResult =
  | { ok: true; value: unknown; decimalNumbers: readonly DecimalNumber[] }
  | { ok: false; reason: "syntax"; message: string }
  | { ok: false; reason: "duplicate-key"; message: string };

/** A number whose JSON text has a fraction or an exponent. */
export interface DecimalNumber {
  /** RFC 6901 JSON Pointer to it ("" for the whole document). */
  pointer: string;
  /** As the sender wrote it. */
  text: string;
}

const NONE: readonly DecimalNumber[] = Object.freeze([]);

export function parseStrictJson(text: string): StrictJsonResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: "syntax", message: (error as Error).message };
  }
  const scan = countText(text);
  // As many members in the value as in the text: no key was written twice. Otherwise find which one.
  const duplicate = scan.members === membersOf(value) ? undefined : scanText(text).duplicate;
  if (duplicate !== undefined) {
    return {
      ok: false,
      reason: "duplicate-key",
      message: `key "${duplicate.key}" appears twice in one object (second at character ${duplicate.offset})`,
    };
  }
  // Pointers cost a path per value: worked out only for bodies that need them.
  return { ok: true, value, decimalNumbers: scan.hasDecimal ? decimalNumbersOf(text) : NONE };
}

/**
 * The cheap pass, over text JSON.parse accepted: how many object members it
 * writes (a colon outside strings ends every key, and nothing else), and
 * whether a number has a fraction or an exponent (outside strings `.` and
 * `E` occur only in numbers, and `e` after a digit only there: in `true`
 * and `false` it follows a letter). Strings are skipped whole with indexOf.
 * JSON.parse keeps one member per distinct key, so the value holds fewer
 * members than the text exactly when some object repeats a key: the first
 * such object has all its members and all its predecessors' in the value.
 */
function countText(text: string): { members: number; hasDecimal: boolean } {
  const length = text.length;
  let members = 0;
  let hasDecimal = false;
  for (let i = 0; i < length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22 /* " */) i = closingQuote(text, i);
    else if (ch === 0x3a /* : */) members++;
    else if (ch === 0x2e /* . */ || ch === 0x45 /* E */ || (ch === 0x65 /* e */ && isDigit(text.charCodeAt(i - 1)))) {
      hasDecimal = true;
    }
  }
  return { members, hasDecimal };
}

/** The index of the quote closing the string that opens at `open`: the next one not escaped. */
function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at !== -1 && isEscaped(text, at)) at = text.indexOf('"', at + 1);
  return at === -1 ? text.length : at;
}

/** Preceded by an odd run of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  for (let i = at - 1; text.charCodeAt(i) === 0x5c /* \ */; i--) backslashes++;
  return backslashes % 2 === 1;
}

function isDigit(ch: number): boolean {
  return ch >= 0x30 && ch <= 0x39;
}

/** Own keys of every object in a parsed value, counted without recursion (a body may nest deeply). */
function membersOf(root: unknown): number {
  let members = 0;
  const pending: object[] = typeof root === "object" && root !== null ? [root] : [];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const children: unknown[] = Array.isArray(next) ? next : Object.values(next);
    if (!Array.isArray(next)) members += children.length;
    for (const child of children) if (typeof child === "object" && child !== null) pending.push(child);
  }
  return members;
}

/**
 * The exact pass, run only when the counts differ: over text JSON.parse
 * accepted (so the grammar is known to be valid), the first repeated key,
 * with its offset, and whether any number has a fraction or an exponent.
 * Numbers are the only tokens outside strings that start with `-` or a
 * digit; the `e` of `true` and `false` is never looked at.
 */
function scanText(text: string): { duplicate?: { key: string; offset: number }; hasDecimal: boolean } {
  const scopes: Array<Set<string> | null> = [];
  const length = text.length;
  let hasDecimal = false;
  for (let i = 0; i < length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x7b /* { */) scopes.push(new Set());
    else if (ch === 0x5b /* [ */) scopes.push(null);
    else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) scopes.pop();
    else if (ch === 0x22 /* " */) {
      const start = i;
      i = endOfString(text, i);
      const keys = scopes[scopes.length - 1];
      if (keys === null || keys === undefined || !followedByColon(text, i + 1)) continue;
      const key = keyOf(text, start, i);
      if (keys.has(key)) return { duplicate: { key, offset: start }, hasDecimal };
      keys.add(key);
    } else if (ch === 0x2d /* - */ || (ch >= 0x30 && ch <= 0x39)) {
      const end = endOfNumber(text, i);
      if (!hasDecimal && isDecimal(text, i, end)) hasDecimal = true;
      i = end - 1;
    }
  }
  return { hasDecimal };
}

/**
 * The second pass, run only when the first found a number with a fraction
 * or an exponent: walks the text keeping the path to the current value.
 */
function decimalNumbersOf(text: string): DecimalNumber[] {
  const found: DecimalNumber[] = [];
  // One segment per open container: the current key of an object, the current index of an array.
  const path: Array<string | number> = [];
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const ch = text.charCodeAt(i);
    const top = path.length - 1;
    if (ch === 0x7b /* { */) path.push("");
    else if (ch === 0x5b /* [ */) path.push(0);
    else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) path.pop();
    else if (ch === 0x2c /* , */ && typeof path[top] === "number") path[top] = (path[top] as number) + 1;
    else if (ch === 0x22 /* " */) {
      const start = i;
      i = endOfString(text, i);
      if (typeof path[top] === "string" && followedByColon(text, i + 1)) path[top] = keyOf(text, start, i);
    } else if (ch === 0x2d /* - */ || (ch >= 0x30 && ch <= 0x39)) {
      const end = endOfNumber(text, i);
      if (isDecimal(text, i, end)) found.push({ pointer: pointerOf(path), text: text.slice(i, end) });
      i = end - 1;
    }
  }
  return found;
}

/** The index of the closing quote of the string opening at `start`. */
function endOfString(text: string, start: number): number {
  let i = start + 1;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x22 /* " */) break;
  }
  return i;
}

/** The key a string token stands for; escapes decoded only when there are any. */
function keyOf(text: string, start: number, end: number): string {
  const raw = text.slice(start, end + 1);
  return raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
}

/** The index just past the number starting at `start`. */
function endOfNumber(text: string, start: number): number {
  let i = start + 1;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const partOfNumber =
      (c >= 0x30 && c <= 0x39) ||
      c === 0x2e /* . */ ||
      c === 0x65 /* e */ ||
      c === 0x45 /* E */ ||
      c === 0x2b /* + */ ||
      c === 0x2d; /* - */
    if (!partOfNumber) break;
  }
  return i;
}

function isDecimal(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e /* . */ || c === 0x65 /* e */ || c === 0x45 /* E */) return true;
  }
  return false;
}

/** RFC 6901: `~` is written `~0` and `/` is written `~1`. */
function pointerOf(path: ReadonlyArray<string | number>): string {
  let pointer = "";
  for (const segment of path) {
    pointer += `/${typeof segment === "number" ? segment : segment.replaceAll("~", "~0").replaceAll("/", "~1")}`;
  }
  return pointer;
}

function followedByColon(text: string, from: number): boolean {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3a /* : */) return true;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  }
  return false;
}
