/**
 * A lexer and a few structural checks for 1C:Enterprise BSL modules. Not a BSL parser: it knows
 * strings (with "" escapes and | continuation lines), comments, date literals, preprocessor lines
 * and annotations, and the block keywords (Russian and English). That is enough to check block
 * balance, the ITS #783 transaction shape, doc comments (#453) and regions (#455).
 */

export interface Problem {
  readonly line: number;
  readonly message: string;
}

export type TokenKind = "word" | "string" | "date" | "number" | "punct" | "preproc" | "annotation";

export type Keyword =
  | "PROCEDURE"
  | "ENDPROCEDURE"
  | "FUNCTION"
  | "ENDFUNCTION"
  | "IF"
  | "THEN"
  | "ELSIF"
  | "ELSE"
  | "ENDIF"
  | "FOR"
  | "WHILE"
  | "DO"
  | "ENDDO"
  | "TRY"
  | "EXCEPT"
  | "ENDTRY"
  | "EXPORT"
  | "VAL"
  | "ASYNC"
  | "NEW"
  | "RETURN"
  | "RAISE"
  | "VAR"
  | "OPERATOR"
  | "LITERAL"
  | "JUMP";

export interface Token {
  readonly kind: TokenKind;
  /** Source text; for strings the decoded value, for preprocessor lines and annotations the line without "#"/"&". */
  readonly text: string;
  readonly lower: string;
  /** Set for block keywords, but never for a member name after "." (Объект.Цикл). */
  readonly keyword: Keyword | undefined;
  readonly line: number;
}

export interface Lexed {
  readonly tokens: Token[];
  /** Lines that hold only a comment, with the text after "//". */
  readonly commentLines: ReadonlyMap<number, string>;
  /** Lines that hold an annotation such as &НаСервере. */
  readonly annotationLines: ReadonlySet<number>;
  readonly problems: Problem[];
}

/** Block keywords and operators, Russian and English spellings (BSL keywords are case-insensitive). */
const KEYWORD_SPELLINGS: ReadonlyArray<readonly [Keyword, readonly string[]]> = [
  ["PROCEDURE", ["процедура", "procedure"]],
  ["ENDPROCEDURE", ["конецпроцедуры", "endprocedure"]],
  ["FUNCTION", ["функция", "function"]],
  ["ENDFUNCTION", ["конецфункции", "endfunction"]],
  ["IF", ["если", "if"]],
  ["THEN", ["тогда", "then"]],
  ["ELSIF", ["иначеесли", "elsif"]],
  ["ELSE", ["иначе", "else"]],
  ["ENDIF", ["конецесли", "endif"]],
  ["FOR", ["для", "for"]],
  ["WHILE", ["пока", "while"]],
  ["DO", ["цикл", "do"]],
  ["ENDDO", ["конеццикла", "enddo"]],
  ["TRY", ["попытка", "try"]],
  ["EXCEPT", ["исключение", "except"]],
  ["ENDTRY", ["конецпопытки", "endtry"]],
  ["EXPORT", ["экспорт", "export"]],
  ["VAL", ["знач", "val"]],
  ["ASYNC", ["асинх", "async"]],
  ["NEW", ["новый", "new"]],
  ["RETURN", ["возврат", "return"]],
  ["RAISE", ["вызватьисключение", "raise"]],
  ["VAR", ["перем", "var"]],
  ["OPERATOR", ["и", "and", "или", "or", "не", "not", "каждого", "each", "из", "in", "по", "to"]],
  ["LITERAL", ["истина", "true", "ложь", "false", "неопределено", "undefined", "null"]],
  ["JUMP", ["прервать", "break", "продолжить", "continue", "перейти", "goto"]],
];
const KEYWORDS: ReadonlyMap<string, Keyword> = new Map(
  KEYWORD_SPELLINGS.flatMap(([keyword, spellings]) => spellings.map((spelling) => [spelling, keyword] as const)),
);

const WORD = /[\p{L}_][\p{L}\p{N}_]*/uy;
const NUMBER = /[0-9]+(?:\.[0-9]+)?/y;

/** Splits a module into tokens. Problems: unterminated strings and date literals. */
export function lexBsl(source: string): Lexed {
  const text = (source.startsWith("\uFEFF") ? source.slice(1) : source).replace(/\r\n?/g, "\n");
  const tokens: Token[] = [];
  const commentLines = new Map<number, string>();
  const annotationLines = new Set<number>();
  const problems: Problem[] = [];
  let i = 0;
  let line = 1;
  let lineHasToken = false;

  const push = (kind: TokenKind, value: string, at: number): void => {
    const lower = value.toLowerCase();
    const previous = tokens[tokens.length - 1];
    const afterDot = previous?.kind === "punct" && previous.text === ".";
    const keyword = kind === "word" && !afterDot ? KEYWORDS.get(lower) : undefined;
    tokens.push({ kind, text: value, lower, keyword, line: at });
    lineHasToken = true;
  };
  const endOfLine = (from: number): number => {
    const end = text.indexOf("\n", from);
    return end < 0 ? text.length : end;
  };

  while (i < text.length) {
    const c = text[i] ?? "";
    if (c === "\n") {
      line += 1;
      lineHasToken = false;
      i += 1;
    } else if (c === " " || c === "\t" || c === "\f" || c === "\u00A0") {
      i += 1;
    } else if (c === "/" && text[i + 1] === "/") {
      const end = endOfLine(i);
      if (!lineHasToken) commentLines.set(line, text.slice(i + 2, end));
      i = end;
    } else if ((c === "#" || c === "&") && !lineHasToken) {
      const end = endOfLine(i);
      let body = text.slice(i + 1, end);
      const comment = body.indexOf("//");
      if (comment >= 0 && c === "#") body = body.slice(0, comment);
      if (c === "&") annotationLines.add(line);
      push(c === "#" ? "preproc" : "annotation", body.trim(), line);
      i = end;
    } else if (c === '"') {
      const startLine = line;
      let j = i + 1;
      let value = "";
      let closed = false;
      while (j < text.length) {
        const ch = text[j];
        if (ch === '"') {
          if (text[j + 1] === '"') {
            value += '"';
            j += 2;
            continue;
          }
          j += 1;
          closed = true;
          break;
        }
        if (ch === "\n") {
          // A string goes on only on a line that starts with "|"; comment lines may sit in between.
          line += 1;
          j += 1;
          for (;;) {
            while (text[j] === " " || text[j] === "\t") j += 1;
            if (!text.startsWith("//", j)) break;
            const end = endOfLine(j);
            j = end + 1;
            line += 1;
          }
          if (text[j] === "|") {
            value += "\n";
            j += 1;
            continue;
          }
          break;
        }
        value += ch;
        j += 1;
      }
      if (!closed) {
        problems.push({
          line: startLine,
          message: "unterminated string literal (a continuation line must start with |)",
        });
        lineHasToken = false;
      }
      push("string", value, startLine);
      i = j;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0 || end > endOfLine(i)) {
        problems.push({ line, message: "unterminated date literal" });
        i = endOfLine(i);
      } else {
        push("date", text.slice(i + 1, end), line);
        i = end + 1;
      }
    } else if (c >= "0" && c <= "9") {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(text);
      const value = match?.[0] ?? c;
      push("number", value, line);
      i += value.length;
    } else {
      WORD.lastIndex = i;
      const match = WORD.exec(text);
      if (match !== null) {
        push("word", match[0], line);
        i += match[0].length;
      } else {
        push("punct", c, line);
        i += 1;
      }
    }
  }
  return { tokens, commentLines, annotationLines, problems };
}

function preprocessorWord(token: Token): string {
  return (/^[\p{L}_]+/u.exec(token.text)?.[0] ?? "").toLowerCase();
}

const REGION_OPEN = new Set(["область", "region"]);
const REGION_CLOSE = new Set(["конецобласти", "endregion"]);
const PRE_IF_OPEN = new Set(["если", "if"]);
const PRE_IF_MIDDLE = new Set(["иначеесли", "elsif", "иначе", "else"]);
const PRE_IF_CLOSE = new Set(["конецесли", "endif"]);
const PRE_PAIRS: Readonly<Record<string, string>> = { удаление: "конецудаления", вставка: "конецвставки" };

const CLOSERS: Readonly<Partial<Record<Keyword, { opener: Keyword; name: string }>>> = {
  ENDPROCEDURE: { opener: "PROCEDURE", name: "КонецПроцедуры" },
  ENDFUNCTION: { opener: "FUNCTION", name: "КонецФункции" },
  ENDIF: { opener: "IF", name: "КонецЕсли" },
  ENDDO: { opener: "FOR", name: "КонецЦикла" },
  ENDTRY: { opener: "TRY", name: "КонецПопытки" },
};
const OPENER_NAMES: Readonly<Partial<Record<Keyword, string>>> = {
  PROCEDURE: "Процедура",
  FUNCTION: "Функция",
  IF: "Если",
  FOR: "Для/Пока … Цикл",
  TRY: "Попытка",
};

/**
 * Procedure/EndProcedure, Function/EndFunction, If/EndIf, For|While/EndDo, Try/Except/EndTry and the
 * preprocessor pairs #Область/#КонецОбласти, #Если/#КонецЕсли must nest properly. Strings and comments
 * are ignored because the lexer has already taken them out.
 */
export function checkBlocks(lexed: Lexed): Problem[] {
  const problems: Problem[] = [...lexed.problems];
  const stack: Array<{ keyword: Keyword; line: number; sawExcept: boolean }> = [];
  const preStack: Array<{ word: string; line: number; text: string }> = [];

  for (const token of lexed.tokens) {
    if (token.kind === "preproc") {
      const word = preprocessorWord(token);
      const top = preStack[preStack.length - 1];
      if (REGION_OPEN.has(word) || PRE_IF_OPEN.has(word) || PRE_PAIRS[word] !== undefined) {
        preStack.push({ word, line: token.line, text: token.text });
      } else if (REGION_CLOSE.has(word)) {
        if (top === undefined || !REGION_OPEN.has(top.word)) {
          problems.push({ line: token.line, message: `#${token.text} without a matching #Область` });
        } else preStack.pop();
      } else if (PRE_IF_MIDDLE.has(word)) {
        if (top === undefined || !PRE_IF_OPEN.has(top.word)) {
          problems.push({ line: token.line, message: `#${token.text} outside #Если` });
        }
      } else if (PRE_IF_CLOSE.has(word)) {
        if (top === undefined || !PRE_IF_OPEN.has(top.word)) {
          problems.push({ line: token.line, message: `#${token.text} without a matching #Если` });
        } else preStack.pop();
      } else if (Object.values(PRE_PAIRS).includes(word)) {
        if (top === undefined || PRE_PAIRS[top.word] !== word) {
          problems.push({ line: token.line, message: `#${token.text} without its opening directive` });
        } else preStack.pop();
      }
      continue;
    }
    const keyword = token.keyword;
    if (keyword === undefined) continue;
    const top = stack[stack.length - 1];
    switch (keyword) {
      case "PROCEDURE":
      case "FUNCTION":
        if (top !== undefined) {
          problems.push({
            line: token.line,
            message: `${token.text} starts before ${OPENER_NAMES[top.keyword]} of line ${top.line} is closed`,
          });
        }
        stack.push({ keyword, line: token.line, sawExcept: false });
        break;
      case "IF":
      case "TRY":
        stack.push({ keyword, line: token.line, sawExcept: false });
        break;
      case "FOR":
      case "WHILE":
        stack.push({ keyword: "FOR", line: token.line, sawExcept: false });
        break;
      case "ELSIF":
      case "ELSE":
        if (top?.keyword !== "IF")
          problems.push({ line: token.line, message: `${token.text} outside Если … КонецЕсли` });
        break;
      case "EXCEPT":
        if (top?.keyword !== "TRY") {
          problems.push({ line: token.line, message: `${token.text} outside Попытка … КонецПопытки` });
        } else if (top.sawExcept) {
          problems.push({ line: token.line, message: `second ${token.text} in the Попытка of line ${top.line}` });
        } else top.sawExcept = true;
        break;
      default: {
        const closer = CLOSERS[keyword];
        if (closer === undefined) break;
        if (top === undefined) {
          problems.push({ line: token.line, message: `${token.text} without a matching opening keyword` });
          break;
        }
        if (top.keyword !== closer.opener) {
          problems.push({
            line: token.line,
            message: `${token.text} closes ${OPENER_NAMES[top.keyword]} of line ${top.line}; expected ${CLOSERS_BY_OPENER[top.keyword]}`,
          });
          // Recover: drop to the matching opener if there is one, so one slip does not cascade.
          const index = stack.map((entry) => entry.keyword).lastIndexOf(closer.opener);
          if (index >= 0) stack.length = index;
          break;
        }
        if (keyword === "ENDTRY" && !top.sawExcept) {
          problems.push({ line: token.line, message: `Попытка of line ${top.line} has no Исключение` });
        }
        stack.pop();
      }
    }
  }
  for (const open of stack) {
    problems.push({ line: open.line, message: `${OPENER_NAMES[open.keyword]} is never closed` });
  }
  for (const open of preStack) problems.push({ line: open.line, message: `#${open.text} is never closed` });
  return problems.sort((a, b) => a.line - b.line);
}

const CLOSERS_BY_OPENER: Readonly<Partial<Record<Keyword, string>>> = Object.fromEntries(
  Object.values(CLOSERS).map((closer) => [closer.opener, closer.name]),
);

export type Item =
  | { readonly type: "kw"; readonly keyword: Keyword; readonly line: number }
  | { readonly type: "stmt"; readonly tokens: readonly Token[]; readonly line: number };

export interface MethodInfo {
  readonly kind: "PROCEDURE" | "FUNCTION";
  readonly name: string;
  readonly params: readonly string[];
  readonly exported: boolean;
  readonly line: number;
  /** Region names enclosing the declaration, outermost first. */
  readonly regions: readonly string[];
  /** Statements and block keywords between the header and КонецПроцедуры/КонецФункции. */
  readonly body: readonly Item[];
}

export interface RegionInfo {
  readonly name: string;
  readonly line: number;
  readonly depth: number;
}

export interface ModuleStructure {
  readonly methods: MethodInfo[];
  readonly regions: RegionInfo[];
  /** Statements found outside any method (module body). */
  readonly looseStatements: Item[];
}

const SPLITTING: ReadonlySet<Keyword> = new Set<Keyword>([
  "IF",
  "THEN",
  "ELSIF",
  "ELSE",
  "ENDIF",
  "FOR",
  "WHILE",
  "DO",
  "ENDDO",
  "TRY",
  "EXCEPT",
  "ENDTRY",
]);

/** Methods with their headers and bodies (as statements and block keywords), and the region tree. */
export function moduleStructure(lexed: Lexed): ModuleStructure {
  const methods: MethodInfo[] = [];
  const regions: RegionInfo[] = [];
  const looseStatements: Item[] = [];
  const regionStack: string[] = [];
  let method:
    | {
        kind: "PROCEDURE" | "FUNCTION";
        name: string;
        params: string[];
        exported: boolean;
        line: number;
        regions: string[];
        body: Item[];
      }
    | undefined;
  let current: Token[] = [];

  const target = (): Item[] => method?.body ?? looseStatements;
  const flush = (): void => {
    const first = current[0];
    if (first !== undefined) target().push({ type: "stmt", tokens: current, line: first.line });
    current = [];
  };

  const tokens = lexed.tokens;
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as Token;
    if (token.kind === "preproc") {
      flush();
      const word = preprocessorWord(token);
      if (REGION_OPEN.has(word)) {
        const name = token.text.slice(word.length).trim();
        regions.push({ name, line: token.line, depth: regionStack.length });
        regionStack.push(name);
      } else if (REGION_CLOSE.has(word)) regionStack.pop();
      continue;
    }
    if (token.kind === "annotation" || token.keyword === "ASYNC") {
      flush();
      continue;
    }
    if (token.keyword === "PROCEDURE" || token.keyword === "FUNCTION") {
      flush();
      const header = readHeader(tokens, i + 1);
      method = {
        kind: token.keyword,
        name: header.name,
        params: header.params,
        exported: header.exported,
        line: token.line,
        regions: [...regionStack],
        body: [],
      };
      i = header.next - 1;
      continue;
    }
    if (token.keyword === "ENDPROCEDURE" || token.keyword === "ENDFUNCTION") {
      flush();
      if (method !== undefined) methods.push(method);
      method = undefined;
      continue;
    }
    if (token.keyword !== undefined && SPLITTING.has(token.keyword)) {
      flush();
      target().push({ type: "kw", keyword: token.keyword, line: token.line });
      continue;
    }
    if (token.kind === "punct" && token.text === ";") {
      flush();
      continue;
    }
    current.push(token);
  }
  flush();
  if (method !== undefined) methods.push(method);
  return { methods, regions, looseStatements };
}

function readHeader(
  tokens: readonly Token[],
  start: number,
): { name: string; params: string[]; exported: boolean; next: number } {
  const name = tokens[start]?.text ?? "";
  const params: string[] = [];
  let i = start + 1;
  if (tokens[i]?.text === "(") {
    let depth = 0;
    let expectName = true;
    for (; i < tokens.length; i += 1) {
      const token = tokens[i] as Token;
      if (token.kind === "punct" && (token.text === "(" || token.text === "[")) {
        depth += 1;
        continue;
      }
      if (token.kind === "punct" && (token.text === ")" || token.text === "]")) {
        depth -= 1;
        if (depth === 0) {
          i += 1;
          break;
        }
        continue;
      }
      if (depth === 1 && token.kind === "punct" && token.text === ",") {
        expectName = true;
        continue;
      }
      if (depth === 1 && expectName && token.kind === "word" && token.keyword !== "VAL") {
        params.push(token.text);
        expectName = false;
      }
    }
  }
  const exported = tokens[i]?.keyword === "EXPORT";
  return { name, params, exported, next: exported ? i + 1 : i };
}

/** True for a statement that is exactly a call: Имя(…). */
export function isCallStatement(item: Item | undefined, names: readonly string[]): boolean {
  if (item?.type !== "stmt") return false;
  const [first, second] = item.tokens;
  const last = item.tokens[item.tokens.length - 1];
  return (
    first?.kind === "word" &&
    names.includes(first.lower) &&
    second?.kind === "punct" &&
    second.text === "(" &&
    last?.kind === "punct" &&
    last.text === ")"
  );
}

const BEGIN = ["начатьтранзакцию", "begintransaction"];
const COMMIT = ["зафиксироватьтранзакцию", "committransaction"];
const ROLLBACK = ["отменитьтранзакцию", "rollbacktransaction"];
const LOCK = ["заблокировать", "lock"];

interface TryBlock {
  readonly start: number;
  except: number | undefined;
  end: number | undefined;
}

function tryBlocks(items: readonly Item[]): TryBlock[] {
  const blocks: TryBlock[] = [];
  const open: TryBlock[] = [];
  items.forEach((item, index) => {
    if (item.type !== "kw") return;
    if (item.keyword === "TRY") {
      const block: TryBlock = { start: index, except: undefined, end: undefined };
      blocks.push(block);
      open.push(block);
    } else if (item.keyword === "EXCEPT") {
      const top = open[open.length - 1];
      if (top !== undefined) top.except = index;
    } else if (item.keyword === "ENDTRY") {
      const top = open.pop();
      if (top !== undefined) top.end = index;
    }
  });
  return blocks;
}

/**
 * ITS #783 and #499 within one method body:
 * - НачатьТранзакцию() is immediately followed by Попытка;
 * - ЗафиксироватьТранзакцию() is the last statement of that Попытка;
 * - ОтменитьТранзакцию() is the first statement of its Исключение;
 * - commit and rollback appear nowhere else (so begin and commit pair up in the same method);
 * - БлокировкаДанных.Заблокировать() is called inside the Попытка of a transaction;
 * - no Исключение block is empty.
 */
export function checkTransactionShape(body: readonly Item[]): Problem[] {
  const problems: Problem[] = [];
  const blocks = tryBlocks(body);
  const paired = new Set<Item>();
  const transactionRanges: Array<{ from: number; to: number }> = [];

  body.forEach((item, index) => {
    if (!isCallStatement(item, BEGIN)) return;
    const next = body[index + 1];
    if (next?.type !== "kw" || next.keyword !== "TRY") {
      problems.push({
        line: item.line,
        message: "НачатьТранзакцию() must be followed immediately by Попытка, with no statement in between (ITS #783)",
      });
      return;
    }
    const block = blocks.find((candidate) => candidate.start === index + 1);
    if (block?.except === undefined) return; // checkBlocks reports the broken Попытка
    const exceptLine = body[block.except]?.line ?? item.line;
    const lastInTry = body[block.except - 1];
    if (isCallStatement(lastInTry, COMMIT)) paired.add(lastInTry as Item);
    else {
      problems.push({
        line: lastInTry?.line ?? exceptLine,
        message: `the last statement before Исключение (line ${exceptLine}) must be ЗафиксироватьТранзакцию() (ITS #783)`,
      });
    }
    const firstInExcept = body[block.except + 1];
    if (isCallStatement(firstInExcept, ROLLBACK)) paired.add(firstInExcept as Item);
    else {
      problems.push({
        line: firstInExcept?.line ?? exceptLine,
        message: `the first statement after Исключение (line ${exceptLine}) must be ОтменитьТранзакцию() (ITS #783)`,
      });
    }
    transactionRanges.push({ from: block.start, to: block.except });
  });

  body.forEach((item, index) => {
    if (isCallStatement(item, COMMIT) && !paired.has(item)) {
      problems.push({
        line: item.line,
        message:
          "ЗафиксироватьТранзакцию() outside the pattern НачатьТранзакцию(); Попытка … ЗафиксироватьТранзакцию(); Исключение (ITS #783)",
      });
    }
    if (isCallStatement(item, ROLLBACK) && !paired.has(item)) {
      problems.push({
        line: item.line,
        message:
          "ОтменитьТранзакцию() must be the first statement of the Исключение of a НачатьТранзакцию(); Попытка (ITS #783)",
      });
    }
    if (item.type === "stmt" && callsMember(item.tokens, LOCK)) {
      const inside = transactionRanges.some((range) => index > range.from && index < range.to);
      if (!inside) {
        problems.push({
          line: item.line,
          message:
            "Заблокировать() must be called inside the Попытка that follows НачатьТранзакцию() (ITS #783, lock-out-of-try)",
        });
      }
    }
  });

  for (const block of blocks) {
    if (block.except === undefined) continue;
    const first = body[block.except + 1];
    if (first?.type === "kw" && first.keyword === "ENDTRY") {
      problems.push({
        line: body[block.except]?.line ?? first.line,
        message: "empty Исключение block: write the error to the event log or raise it again (ITS #499)",
      });
    }
  }
  return problems.sort((a, b) => a.line - b.line);
}

function callsMember(tokens: readonly Token[], names: readonly string[]): boolean {
  return tokens.some(
    (token, index) =>
      token.kind === "word" &&
      names.includes(token.lower) &&
      tokens[index - 1]?.text === "." &&
      tokens[index + 1]?.text === "(",
  );
}

/** The doc comment directly above a method (annotation lines skipped), or undefined. */
export function docComment(lexed: Lexed, method: MethodInfo): string | undefined {
  let line = method.line - 1;
  while (lexed.annotationLines.has(line)) line -= 1;
  const lines: string[] = [];
  for (;;) {
    const text = lexed.commentLines.get(line);
    if (text === undefined) break;
    lines.unshift(text);
    line -= 1;
  }
  return lines.length === 0 ? undefined : lines.join("\n");
}

/**
 * ITS #453: an exported method has a comment right above it; with parameters it has a
 * "Параметры:" section, a function has "Возвращаемое значение:".
 */
export function checkDocComments(lexed: Lexed, methods: readonly MethodInfo[]): Problem[] {
  const problems: Problem[] = [];
  for (const method of methods) {
    if (!method.exported) continue;
    const what = `exported ${method.kind === "FUNCTION" ? "function" : "procedure"} ${method.name}`;
    const comment = docComment(lexed, method);
    if (comment === undefined) {
      problems.push({ line: method.line, message: `${what} has no doc comment directly above it (ITS #453)` });
      continue;
    }
    if (method.params.length > 0 && !/Параметры:|Parameters:/.test(comment)) {
      problems.push({ line: method.line, message: `doc comment of ${what} has no "Параметры:" section (ITS #453)` });
    }
    if (method.kind === "FUNCTION" && !/Возвращаемое значение:|Returns:/.test(comment)) {
      problems.push({
        line: method.line,
        message: `doc comment of ${what} has no "Возвращаемое значение:" section (ITS #453)`,
      });
    }
  }
  return problems;
}

export interface RegionRules {
  /** Allowed names of top-level regions (ITS #455 for the module kind). */
  readonly topLevel: readonly string[];
  /** Top-level regions that hold the exported methods, and only them (program interface). */
  readonly exportRegions?: readonly string[];
}

/** ITS #455: standard top-level regions, every method inside a region, exported methods in the interface regions. */
export function checkRegions(structure: ModuleStructure, rules: RegionRules): Problem[] {
  const problems: Problem[] = [];
  for (const region of structure.regions) {
    if (region.depth === 0 && !rules.topLevel.includes(region.name)) {
      problems.push({
        line: region.line,
        message: `top-level region ${region.name} is not one of ${rules.topLevel.join(", ")} (ITS #455)`,
      });
    }
  }
  for (const method of structure.methods) {
    const top = method.regions[0];
    if (top === undefined) {
      problems.push({ line: method.line, message: `${method.name} is outside any #Область (ITS #455)` });
      continue;
    }
    const exportRegions = rules.exportRegions;
    if (exportRegions === undefined) continue;
    if (method.exported && !exportRegions.includes(top)) {
      problems.push({
        line: method.line,
        message: `exported ${method.name} is in region ${top}; exported methods belong in ${exportRegions.join(" or ")} (ITS #455)`,
      });
    }
    if (!method.exported && exportRegions.includes(top)) {
      problems.push({
        line: method.line,
        message: `non-exported ${method.name} is in the interface region ${top} (ITS #455)`,
      });
    }
  }
  for (const item of structure.looseStatements) {
    problems.push({ line: item.line, message: "code outside any procedure or function" });
  }
  return problems;
}

export interface Call {
  /** "" for an unqualified call, otherwise the dotted prefix: "ИнтСайт_HTTPОтветы", "РегистрыСведений.Имя". */
  readonly qualifier: string;
  readonly name: string;
  readonly line: number;
}

/**
 * Every call site Имя(…) and Модуль.Имя(…), except constructors (Новый Тип(…)) and calls on
 * expressions that are not plain dotted names (Запрос.Выполнить().Выбрать()).
 */
export function callsIn(tokens: readonly Token[]): Call[] {
  const calls: Call[] = [];
  tokens.forEach((token, index) => {
    if (token.kind !== "word" || token.keyword !== undefined || tokens[index + 1]?.text !== "(") return;
    const parts = [token.text];
    let j = index - 1;
    while (tokens[j]?.text === "." && tokens[j - 1]?.kind === "word") {
      parts.unshift((tokens[j - 1] as Token).text);
      j -= 2;
    }
    if (tokens[j]?.text === "." || tokens[j]?.text === ")" || tokens[j]?.text === "]") return; // member of an expression
    const before = tokens[j]?.keyword;
    if (before === "NEW" || before === "PROCEDURE" || before === "FUNCTION") return; // constructor or declaration
    const name = parts.pop() as string;
    calls.push({ qualifier: parts.join("."), name, line: token.line });
  });
  return calls;
}

/** Lowercased names, for BSL's case-insensitive identifiers. */
export function lowerSet(names: Iterable<string>): Set<string> {
  return new Set([...names].map((name) => name.toLowerCase()));
}
