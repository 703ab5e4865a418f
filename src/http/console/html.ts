/**
 * The console's only way to write HTML: a tagged template that escapes every
 * interpolation. Markup passes through unescaped only as an `Html` value, and
 * the only way to make one is this template itself, so every `Html` is either
 * the console's own literal markup or escaped text: safe by construction.
 * Everything the register holds (event bodies, 1C's messages, reasons) is
 * hostile input and goes through here.
 */

/** Held by this module only: no other module can construct an `Html`. */
const MADE_HERE = Symbol("made by html");

/** Markup this module made: literal template text around escaped values. */
export class Html {
  readonly #text: string;

  constructor(maker: typeof MADE_HERE, text: string) {
    if (maker !== MADE_HERE) throw new Error("Html is made by the html template only");
    this.#text = text;
  }

  toString(): string {
    return this.#text;
  }
}

/** What a template may interpolate: escaped text, or markup made by `html`, or lists of either. */
export type Interpolation = Html | string | number | boolean | null | undefined | readonly Interpolation[];

/**
 * `html\`<td>${value}</td>\`` escapes `value`; `null`, `undefined` and `false`
 * write nothing (so `${cond && html\`…\`}` works). An interpolation right after
 * `=` would be an unquoted attribute value, which escaping cannot protect: it throws.
 */
export function html(strings: TemplateStringsArray, ...values: readonly Interpolation[]): Html {
  let out = strings[0] ?? "";
  for (const [index, value] of values.entries()) {
    if (/=\s*$/.test(strings[index] ?? "")) {
      throw new Error(`html: interpolation ${index} is an unquoted attribute value; quote it`);
    }
    out += render(value) + (strings[index + 1] ?? "");
  }
  return new Html(MADE_HERE, out);
}

function render(value: Interpolation): string {
  if (value instanceof Html) return value.toString();
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Characters that reorder or hide text without being seen (bidirectional
 * overrides and isolates, marks, zero-width characters): a hostile body could
 * make "FAILED" read as something else. They are shown as `\u202E`, the way
 * JSON would write them, so support sees what is really there.
 */
const INVISIBLE_CONTROLS = /[\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/g;

/** Text → HTML text, safe in element content and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char)
    .replace(
      INVISIBLE_CONTROLS,
      (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`,
    );
}
