/**
 * JSON.parse silently keeps the last of two equal keys, so `{"a":1,"a":2}` and
 * `{"a":2}` would fingerprint alike while a sender meant something else.
 * We parse with the built-in parser (fast, exact errors) and then scan the text
 * once for repeated keys.
 */
export type StrictJsonResult =
  | { ok: true; value: unknown }
  | { ok: false; reason: "syntax"; message: string }
  | { ok: false; reason: "duplicate-key"; message: string };

export function parseStrictJson(text: string): StrictJsonResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: "syntax", message: (error as Error).message };
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) {
    return {
      ok: false,
      reason: "duplicate-key",
      message: `key "${duplicate.key}" appears twice in one object (second at character ${duplicate.offset})`,
    };
  }
  return { ok: true, value };
}

/** Only called on text JSON.parse accepted, so the grammar is known to be valid. */
function findDuplicateKey(text: string): { key: string; offset: number } | undefined {
  const scopes: Array<Set<string> | null> = [];
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x7b /* { */) scopes.push(new Set());
    else if (ch === 0x5b /* [ */) scopes.push(null);
    else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) scopes.pop();
    else if (ch === 0x22 /* " */) {
      const start = i;
      let escaped = false;
      for (i++; i < length; i++) {
        const c = text.charCodeAt(i);
        if (c === 0x5c /* \ */) {
          escaped = true;
          i++;
        } else if (c === 0x22) break;
      }
      const keys = scopes[scopes.length - 1];
      if (keys === null || keys === undefined || !followedByColon(text, i + 1)) continue;
      const raw = text.slice(start, i + 1);
      const key = escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      if (keys.has(key)) return { key, offset: start };
      keys.add(key);
    }
  }
  return undefined;
}

function followedByColon(text: string, from: number): boolean {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3a /* : */) return true;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  }
  return false;
}
