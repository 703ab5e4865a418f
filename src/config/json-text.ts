/**
 * The configuration files' JSON. JSON.parse's SyntaxError quotes the text
 * around the fault (`Unexpected token 'w', ..."secrets":[wc-secret-"...`),
 * and SOURCES_FILE holds the platforms' secrets in clear: a syntax error is
 * reported by its line and column alone (docs/security.md: no configuration
 * error shows any part of a secret).
 */
export class JsonSyntaxError extends Error {
  override readonly name = "JsonSyntaxError";
}

/** JSON.parse, whose syntax errors become a JsonSyntaxError naming only where the fault is. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    const offset = syntaxErrorOffset(text);
    throw new JsonSyntaxError(offset === undefined ? "not valid JSON" : `a syntax error at ${placeOf(text, offset)}`);
  }
}

/** "line 3, column 14", both from 1; a column counts UTF-16 code units, as editors mostly do. */
function placeOf(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf("\n"); at !== -1 && at < offset; at = text.indexOf("\n", at + 1)) {
    line += 1;
    lineStart = at + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}

/** Thrown by the scanner at the first character that cannot continue the text as JSON. */
class Fault {
  readonly offset: number;
  constructor(offset: number) {
    this.offset = offset;
  }
}

const DIGIT = /[0-9]/;
const HEX = /[0-9A-Fa-f]/;
const ESCAPED = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

/**
 * Where RFC 8259's grammar first fails on `text` (the end of the text when it
 * stops short); undefined when the scanner finds no fault (nesting too deep
 * for its recursion, say), and the message then names no place.
 */
function syntaxErrorOffset(text: string): number | undefined {
  let i = 0;
  const at = (): string => text.charAt(i);
  const fail = (): never => {
    throw new Fault(i);
  };
  const expectChar = (char: string): void => {
    if (at() !== char) fail();
    i += 1;
  };
  const whitespace = (): void => {
    while (at() === " " || at() === "\t" || at() === "\n" || at() === "\r") i += 1;
  };
  const digits = (): void => {
    if (!DIGIT.test(at())) fail();
    while (DIGIT.test(at())) i += 1;
  };
  const string = (): void => {
    expectChar('"');
    for (;;) {
      if (i >= text.length) fail();
      const char = at();
      if (char === '"') {
        i += 1;
        return;
      }
      if (char.charCodeAt(0) < 0x20) fail();
      i += 1;
      if (char !== "\\") continue;
      if (ESCAPED.has(at())) i += 1;
      else if (at() === "u") {
        i += 1;
        for (let n = 0; n < 4; n++) {
          if (!HEX.test(at())) fail();
          i += 1;
        }
      } else fail();
    }
  };
  const number = (): void => {
    if (at() === "-") i += 1;
    if (at() === "0") i += 1;
    else digits();
    if (at() === ".") {
      i += 1;
      digits();
    }
    if (at() === "e" || at() === "E") {
      i += 1;
      if (at() === "+" || at() === "-") i += 1;
      digits();
    }
  };
  const value = (): void => {
    whitespace();
    const char = at();
    if (char === "{") {
      i += 1;
      whitespace();
      if (at() === "}") {
        i += 1;
        return;
      }
      for (;;) {
        whitespace();
        string();
        whitespace();
        expectChar(":");
        value();
        whitespace();
        if (at() === "}") {
          i += 1;
          return;
        }
        expectChar(",");
      }
    }
    if (char === "[") {
      i += 1;
      whitespace();
      if (at() === "]") {
        i += 1;
        return;
      }
      for (;;) {
        value();
        whitespace();
        if (at() === "]") {
          i += 1;
          return;
        }
        expectChar(",");
      }
    }
    if (char === '"') {
      string();
      return;
    }
    if (char === "-" || DIGIT.test(char)) {
      number();
      return;
    }
    for (const word of ["true", "false", "null"]) {
      if (char === word.charAt(0)) {
        for (const letter of word) expectChar(letter);
        return;
      }
    }
    fail();
  };
  try {
    value();
    whitespace();
    if (i < text.length) fail();
    return undefined;
  } catch (error) {
    if (error instanceof Fault) return error.offset;
    // RangeError: nesting deeper than the stack.
    return undefined;
  }
}
