/**
 * The tokens of a BSL module for the recursive-descent parser (parser.ts). Written for the parser
 * on purpose, apart from the structural scanner in bsl-lite.ts: a parser needs every token, with
 * keywords resolved once and string literals decoded, and must fail on the first malformed one.
 */

export interface SyntaxProblem {
  readonly line: number;
  readonly message: string;
}

export class BslSyntaxError extends Error {
  readonly line: number;

  constructor(line: number, message: string) {
    super(message);
    this.line = line;
  }
}

export type TokenKind = "ident" | "keyword" | "number" | "string" | "date" | "punct" | "preproc" | "annotation" | "eof";

export interface Token {
  readonly kind: TokenKind;
  /** As written; for strings the decoded value ("" → ", | continuations joined with \n). */
  readonly text: string;
  /** The keyword in English upper case (IF, ENDIF, …) for kind "keyword". */
  readonly keyword: string;
  readonly line: number;
  /** For strings: the source line of each line of the decoded value (comment lines inside are skipped). */
  readonly lines: readonly number[];
}

/** Reserved words of the language, Russian and English, → one canonical name. Case-insensitive. */
const KEYWORDS: ReadonlyMap<string, string> = new Map(
  (
    [
      ["PROCEDURE", "процедура", "procedure"],
      ["ENDPROCEDURE", "конецпроцедуры", "endprocedure"],
      ["FUNCTION", "функция", "function"],
      ["ENDFUNCTION", "конецфункции", "endfunction"],
      ["IF", "если", "if"],
      ["THEN", "тогда", "then"],
      ["ELSIF", "иначеесли", "elsif"],
      ["ELSE", "иначе", "else"],
      ["ENDIF", "конецесли", "endif"],
      ["FOR", "для", "for"],
      ["EACH", "каждого", "each"],
      ["IN", "из", "in"],
      ["TO", "по", "to"],
      ["WHILE", "пока", "while"],
      ["DO", "цикл", "do"],
      ["ENDDO", "конеццикла", "enddo"],
      ["TRY", "попытка", "try"],
      ["EXCEPT", "исключение", "except"],
      ["ENDTRY", "конецпопытки", "endtry"],
      ["RETURN", "возврат", "return"],
      ["BREAK", "прервать", "break"],
      ["CONTINUE", "продолжить", "continue"],
      ["RAISE", "вызватьисключение", "raise"],
      ["VAR", "перем", "var"],
      ["EXPORT", "экспорт", "export"],
      ["VAL", "знач", "val"],
      ["NEW", "новый", "new"],
      ["AND", "и", "and"],
      ["OR", "или", "or"],
      ["NOT", "не", "not"],
      ["TRUE", "истина", "true"],
      ["FALSE", "ложь", "false"],
      ["UNDEFINED", "неопределено", "undefined"],
      ["NULL", "null"],
      ["GOTO", "перейти", "goto"],
    ] as const
  ).flatMap(([name, ...spellings]) => spellings.map((spelling) => [spelling, name] as const)),
);

const PUNCTUATION = [
  "<>",
  "<=",
  ">=",
  "(",
  ")",
  "[",
  "]",
  ".",
  ",",
  ";",
  "=",
  "<",
  ">",
  "+",
  "-",
  "*",
  "/",
  "%",
  "?",
  "~",
  ":",
];
const LETTER = /[\p{L}_]/u;
const WORD_CHAR = /[\p{L}\p{N}_]/u;
const DIGIT = /[0-9]/;

/** Splits a module into tokens; throws BslSyntaxError with the line of the first malformed token. */
export function tokenize(source: string): Token[] {
  const text = (source.startsWith("\uFEFF") ? source.slice(1) : source).replace(/\r\n?/g, "\n");
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  const push = (kind: TokenKind, value: string, at: number, lines: readonly number[] = []): void => {
    const keyword = kind === "ident" ? KEYWORDS.get(value.toLowerCase()) : undefined;
    tokens.push({
      kind: keyword === undefined ? kind : "keyword",
      text: value,
      keyword: keyword ?? "",
      line: at,
      lines,
    });
  };
  const restOfLine = (from: number): string => {
    const end = text.indexOf("\n", from);
    return text.slice(from, end < 0 ? text.length : end);
  };

  while (i < text.length) {
    const ch = text[i] ?? "";
    if (ch === "\n") {
      line += 1;
      i += 1;
    } else if (ch === " " || ch === "\t" || ch === "\u00A0") {
      i += 1;
    } else if (text.startsWith("//", i)) {
      i += restOfLine(i).length;
    } else if (ch === "#" || ch === "&") {
      // Preprocessor instructions and annotations take the whole line.
      const value = restOfLine(i);
      push(ch === "#" ? "preproc" : "annotation", value.slice(1).trim(), line);
      i += value.length;
    } else if (ch === '"') {
      const start = line;
      const lines: number[] = [line];
      let value = "";
      i += 1;
      for (;;) {
        const c = text[i];
        if (c === undefined) throw new BslSyntaxError(start, "unterminated string literal");
        if (c === '"') {
          if (text[i + 1] === '"') {
            value += '"';
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        if (c === "\n") {
          // A string goes on only on a line that starts with "|"; comment lines may sit in between.
          line += 1;
          i += 1;
          for (;;) {
            const next = restOfLine(i);
            const trimmed = next.trimStart();
            if (trimmed.startsWith("//")) {
              i += next.length + 1;
              line += 1;
              continue;
            }
            if (!trimmed.startsWith("|")) {
              throw new BslSyntaxError(start, "unterminated string literal (a new line of a string must start with |)");
            }
            i += next.length - trimmed.length + 1;
            break;
          }
          value += "\n";
          lines.push(line);
          continue;
        }
        value += c;
        i += 1;
      }
      push("string", value, start, lines);
    } else if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      const newline = text.indexOf("\n", i + 1);
      if (end < 0 || (newline >= 0 && newline < end)) throw new BslSyntaxError(line, "unterminated date literal");
      const value = text.slice(i + 1, end);
      if (!/^[0-9]{8}([0-9]{6})?$/.test(value.replace(/[^0-9]/g, ""))) {
        throw new BslSyntaxError(line, `malformed date literal '${value}'`);
      }
      push("date", value, line);
      i = end + 1;
    } else if (DIGIT.test(ch)) {
      let j = i;
      while (DIGIT.test(text[j] ?? "")) j += 1;
      if (text[j] === "." && DIGIT.test(text[j + 1] ?? "")) {
        j += 1;
        while (DIGIT.test(text[j] ?? "")) j += 1;
      }
      push("number", text.slice(i, j), line);
      i = j;
    } else if (LETTER.test(ch)) {
      let j = i;
      while (WORD_CHAR.test(text[j] ?? "")) j += 1;
      push("ident", text.slice(i, j), line);
      i = j;
    } else {
      const punct = PUNCTUATION.find((p) => text.startsWith(p, i));
      if (punct === undefined) throw new BslSyntaxError(line, `unexpected character "${ch}"`);
      push("punct", punct, line);
      i += punct.length;
    }
  }
  push("eof", "", line);
  return tokens;
}
