/**
 * A small XML well-formedness checker that also builds a tree, enough for the Designer dump
 * (elements, attributes, text, comments, CDATA, processing instructions). No DTD, no namespaces
 * resolution: names are kept as written ("xr:TypeId"). No dependency on purpose.
 */

export interface XmlElement {
  readonly name: string;
  readonly attributes: ReadonlyMap<string, string>;
  readonly children: XmlElement[];
  /** Decoded text directly inside this element (children's text excluded). */
  text: string;
  readonly line: number;
}

export interface XmlProblem {
  readonly line: number;
  readonly message: string;
}

export type XmlParseResult = { ok: true; root: XmlElement } | { ok: false; problem: XmlProblem };

const NAME = /^[\p{L}_:][\p{L}\p{N}_.:\-\u00B7]*/u;
const PREDEFINED_ENTITIES: Readonly<Record<string, string>> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

class XmlSyntaxError extends Error {
  readonly line: number;

  constructor(line: number, message: string) {
    super(message);
    this.line = line;
  }
}

/** Parses `source` (without a BOM); any violation of well-formedness is reported with its line. */
export function parseXml(source: string): XmlParseResult {
  try {
    return { ok: true, root: new Parser(source).document() };
  } catch (error) {
    if (error instanceof XmlSyntaxError) return { ok: false, problem: { line: error.line, message: error.message } };
    throw error;
  }
}

/** Children with the given name. */
export function childrenNamed(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((child) => child.name === name);
}

/** The first child with the given name, if any. */
export function child(element: XmlElement | undefined, name: string): XmlElement | undefined {
  return element?.children.find((candidate) => candidate.name === name);
}

/** Follows a path of child names: path(root, "Properties", "Name"). */
export function path(element: XmlElement | undefined, ...names: string[]): XmlElement | undefined {
  let current = element;
  for (const name of names) current = child(current, name);
  return current;
}

/** Every element of the tree, depth first, with its ancestors. */
export function* walk(
  element: XmlElement,
  ancestors: readonly XmlElement[] = [],
): Generator<{ element: XmlElement; ancestors: readonly XmlElement[] }> {
  yield { element, ancestors };
  for (const nested of element.children) yield* walk(nested, [...ancestors, element]);
}

class Parser {
  readonly src: string;
  #pos = 0;
  readonly #lineStarts: number[] = [0];

  constructor(src: string) {
    this.src = src;
    for (let i = 0; i < src.length; i += 1) if (src[i] === "\n") this.#lineStarts.push(i + 1);
  }

  document(): XmlElement {
    if (this.src.startsWith("\uFEFF")) this.fail("unexpected BOM inside the text (strip it before parsing)");
    if (this.src.startsWith("<?xml")) this.declaration();
    this.misc();
    if (this.#pos >= this.src.length || this.src[this.#pos] !== "<") this.fail("expected the root element");
    if (this.src.startsWith("<!DOCTYPE", this.#pos)) this.fail("DOCTYPE is not expected in a Designer dump");
    const root = this.element();
    this.misc();
    if (this.#pos < this.src.length) this.fail("content after the root element");
    return root;
  }

  private declaration(): void {
    const end = this.src.indexOf("?>", this.#pos);
    if (end < 0) this.fail("unterminated XML declaration");
    const body = this.src.slice(this.#pos + 5, end);
    if (!/^\s+version\s*=\s*(["'])1\.[0-9]+\1/.test(body)) this.fail("XML declaration without version");
    const encoding = /encoding\s*=\s*(["'])([^"']*)\1/.exec(body);
    if (encoding !== null && encoding[2]?.toUpperCase() !== "UTF-8") this.fail("encoding must be UTF-8");
    this.#pos = end + 2;
  }

  /** Whitespace, comments and processing instructions outside the root element. */
  private misc(): void {
    for (;;) {
      this.skipSpace();
      if (this.src.startsWith("<!--", this.#pos)) this.comment();
      else if (this.src.startsWith("<?", this.#pos)) this.processingInstruction();
      else return;
    }
  }

  private element(): XmlElement {
    const line = this.lineAt(this.#pos);
    this.#pos += 1; // <
    const name = this.name("element name");
    const attributes = new Map<string, string>();
    for (;;) {
      const hadSpace = this.skipSpace();
      if (this.src.startsWith("/>", this.#pos)) {
        this.#pos += 2;
        return { name, attributes, children: [], text: "", line };
      }
      if (this.src[this.#pos] === ">") {
        this.#pos += 1;
        break;
      }
      if (this.#pos >= this.src.length) this.fail(`unterminated start tag <${name}>`, line);
      if (!hadSpace) this.fail(`expected whitespace before an attribute in <${name}>`);
      const attributeName = this.name("attribute name");
      this.skipSpace();
      if (this.src[this.#pos] !== "=") this.fail(`attribute ${attributeName} has no value`);
      this.#pos += 1;
      this.skipSpace();
      const quote = this.src[this.#pos];
      if (quote !== '"' && quote !== "'") this.fail(`attribute ${attributeName} value must be quoted`);
      const end = this.src.indexOf(quote, this.#pos + 1);
      if (end < 0) this.fail(`unterminated value of attribute ${attributeName}`);
      const raw = this.src.slice(this.#pos + 1, end);
      if (raw.includes("<")) this.fail(`"<" in the value of attribute ${attributeName}`);
      if (attributes.has(attributeName)) this.fail(`duplicate attribute ${attributeName} in <${name}>`);
      attributes.set(attributeName, this.decode(raw, this.#pos + 1));
      this.#pos = end + 1;
    }

    const element: XmlElement = { name, attributes, children: [], text: "", line };
    for (;;) {
      if (this.#pos >= this.src.length) this.fail(`element <${name}> is never closed`, line);
      if (this.src.startsWith("</", this.#pos)) {
        this.#pos += 2;
        const closing = this.name("closing tag name");
        if (closing !== name) this.fail(`</${closing}> closes <${name}> opened on line ${line}`);
        this.skipSpace();
        if (this.src[this.#pos] !== ">") this.fail(`malformed closing tag </${closing}>`);
        this.#pos += 1;
        return element;
      }
      if (this.src.startsWith("<!--", this.#pos)) this.comment();
      else if (this.src.startsWith("<![CDATA[", this.#pos)) {
        const end = this.src.indexOf("]]>", this.#pos);
        if (end < 0) this.fail("unterminated CDATA section");
        element.text += this.src.slice(this.#pos + 9, end);
        this.#pos = end + 3;
      } else if (this.src.startsWith("<?", this.#pos)) this.processingInstruction();
      else if (this.src.startsWith("<!", this.#pos)) this.fail("unexpected markup declaration");
      else if (this.src[this.#pos] === "<") element.children.push(this.element());
      else {
        const next = this.src.indexOf("<", this.#pos);
        const end = next < 0 ? this.src.length : next;
        const raw = this.src.slice(this.#pos, end);
        if (raw.includes("]]>")) this.fail('"]]>" in text');
        element.text += this.decode(raw, this.#pos);
        this.#pos = end;
      }
    }
  }

  private comment(): void {
    const end = this.src.indexOf("-->", this.#pos + 4);
    if (end < 0) this.fail("unterminated comment");
    if (this.src.slice(this.#pos + 4, end).includes("--")) this.fail('"--" inside a comment');
    this.#pos = end + 3;
  }

  private processingInstruction(): void {
    const end = this.src.indexOf("?>", this.#pos);
    if (end < 0) this.fail("unterminated processing instruction");
    if (/^<\?xml[\s?]/i.test(this.src.slice(this.#pos, this.#pos + 6))) {
      this.fail("XML declaration is only allowed at the very start");
    }
    this.#pos = end + 2;
  }

  private name(what: string): string {
    const match = NAME.exec(this.src.slice(this.#pos, this.#pos + 200));
    if (match === null) this.fail(`expected ${what}`);
    this.#pos += match[0].length;
    return match[0];
  }

  private decode(raw: string, offset: number): string {
    return raw.replace(/&([^;&\s]*);?/g, (whole, entity: string, index: number) => {
      const at = offset + index;
      if (!whole.endsWith(";")) this.fail('"&" not followed by an entity reference', this.lineAt(at));
      const predefined = PREDEFINED_ENTITIES[entity];
      if (predefined !== undefined) return predefined;
      const numeric = /^#(?:x([0-9a-fA-F]+)|([0-9]+))$/.exec(entity);
      if (numeric === null) this.fail(`unknown entity &${entity};`, this.lineAt(at));
      const code = numeric[1] !== undefined ? Number.parseInt(numeric[1], 16) : Number(numeric[2]);
      if (!(code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0x10ffff))) {
        this.fail(`character reference &${entity}; is not a legal XML character`, this.lineAt(at));
      }
      return String.fromCodePoint(code);
    });
  }

  private skipSpace(): boolean {
    const start = this.#pos;
    while (this.#pos < this.src.length && /[ \t\r\n]/.test(this.src[this.#pos] ?? "")) this.#pos += 1;
    return this.#pos > start;
  }

  private lineAt(index: number): number {
    let low = 0;
    let high = this.#lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.#lineStarts[middle] ?? 0) <= index) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }

  private fail(message: string, line: number = this.lineAt(this.#pos)): never {
    throw new XmlSyntaxError(line, message);
  }
}
