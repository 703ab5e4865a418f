import { BslSyntaxError, type SyntaxProblem, type Token, tokenize } from "./lexer.ts";
import { checkQuery, looksLikeQuery } from "./query.ts";

/**
 * A recursive-descent parser for the BSL our modules are written in: module-level Перем, procedures
 * and functions (Знач, default values, Экспорт, annotations), statements (assignment, call, Если,
 * Для/Для Каждого, Пока, Попытка, Возврат, ВызватьИсключение, Прервать, Продолжить) and expressions
 * (И/ИЛИ/НЕ, comparisons, arithmetic, member access, indexing, calls with empty arguments, Новый,
 * ?(…), literals). Preprocessor lines (#Область, #Если) must pair up. Strings that hold a query
 * (ВЫБРАТЬ …) are parsed by query.ts. It builds no tree: the point is to fail, at the right line,
 * wherever Designer's syntax check would.
 */

export interface ParsedModule {
  readonly methods: ReadonlyArray<{
    readonly name: string;
    readonly kind: "PROCEDURE" | "FUNCTION";
    readonly line: number;
  }>;
  /** Number of query texts found in string literals and parsed. */
  readonly queries: number;
}

export type ParseResult = { ok: true; module: ParsedModule } | { ok: false; problem: SyntaxProblem };

export function parseBsl(source: string): ParseResult {
  try {
    return { ok: true, module: new Parser(tokenize(source)).module() };
  } catch (error) {
    if (error instanceof BslSyntaxError) return { ok: false, problem: { line: error.line, message: error.message } };
    throw error;
  }
}

/** Keywords that end a statement list; which one is allowed is up to the block being parsed. */
const BLOCK_ENDS = new Set(["ENDPROCEDURE", "ENDFUNCTION", "ELSIF", "ELSE", "ENDIF", "ENDDO", "EXCEPT", "ENDTRY"]);
const COMPARISONS = new Set(["=", "<>", "<", ">", "<=", ">="]);
const PREPROC_OPEN: Readonly<Record<string, string>> = {
  область: "region",
  region: "region",
  если: "if",
  if: "if",
  удаление: "delete",
  delete: "delete",
  вставка: "insert",
  insert: "insert",
};
const PREPROC_CLOSE: Readonly<Record<string, string>> = {
  конецобласти: "region",
  endregion: "region",
  конецесли: "if",
  endif: "if",
  конецудаления: "delete",
  enddelete: "delete",
  конецвставки: "insert",
  endinsert: "insert",
};

class Parser {
  readonly #tokens: Token[];
  #pos = 0;
  #queries = 0;
  #inFunction = false;

  constructor(all: Token[]) {
    checkPreprocessor(all);
    // Preprocessor lines and annotations are checked above; the grammar below does not see them
    // (annotations only stand before a method, which the method header accepts either way).
    this.#tokens = all.filter((token) => token.kind !== "preproc" && token.kind !== "annotation");
    for (const token of this.#tokens) {
      if (token.kind === "string" && looksLikeQuery(token.text)) {
        const problem = checkQuery(token.text);
        if (problem !== undefined) {
          throw new BslSyntaxError(token.lines[problem.lineIndex] ?? token.line, `query: ${problem.message}`);
        }
        this.#queries += 1;
      }
    }
  }

  module(): ParsedModule {
    const methods: Array<{ name: string; kind: "PROCEDURE" | "FUNCTION"; line: number }> = [];
    while (this.#peek().kind !== "eof") {
      if (this.#isKeyword("VAR")) {
        this.#varDeclaration();
      } else if (this.#isKeyword("PROCEDURE") || this.#isKeyword("FUNCTION")) {
        methods.push(this.#method());
      } else {
        // Module-level statements (the module body) come after the methods.
        this.#statements(new Set(["EOF"]));
      }
    }
    return { methods, queries: this.#queries };
  }

  #method(): { name: string; kind: "PROCEDURE" | "FUNCTION"; line: number } {
    const header = this.#next();
    const kind = header.keyword === "FUNCTION" ? "FUNCTION" : "PROCEDURE";
    const name = this.#expectIdent(`the name of the ${kind === "FUNCTION" ? "Функция" : "Процедура"}`);
    this.#expectPunct("(", `"(" after ${name.text}`);
    if (!this.#isPunct(")")) {
      for (;;) {
        if (this.#isKeyword("VAL")) this.#next();
        this.#expectIdent("a parameter name");
        if (this.#isPunct("=")) {
          this.#next();
          this.#defaultValue();
        }
        if (!this.#isPunct(",")) break;
        this.#next();
      }
    }
    this.#expectPunct(")", `")" closing the parameters of ${name.text}`);
    if (this.#isKeyword("EXPORT")) this.#next();
    const end = kind === "FUNCTION" ? "ENDFUNCTION" : "ENDPROCEDURE";
    this.#inFunction = kind === "FUNCTION";
    while (this.#isKeyword("VAR")) this.#varDeclaration();
    this.#statements(new Set([end]), `${name.text} (line ${header.line})`);
    const closing = this.#peek();
    if (closing.keyword !== end) {
      throw new BslSyntaxError(
        closing.line,
        `${describe(closing)} where ${end === "ENDFUNCTION" ? "КонецФункции" : "КонецПроцедуры"} closing ${name.text} (line ${header.line}) was expected`,
      );
    }
    this.#next();
    this.#inFunction = false;
    return { name: name.text, kind, line: header.line };
  }

  #defaultValue(): void {
    if (this.#isPunct("-") || this.#isPunct("+")) this.#next();
    const token = this.#next();
    const literal =
      token.kind === "number" ||
      token.kind === "string" ||
      token.kind === "date" ||
      ["TRUE", "FALSE", "UNDEFINED", "NULL"].includes(token.keyword);
    if (!literal) throw new BslSyntaxError(token.line, `a default value must be a literal, got ${describe(token)}`);
  }

  #varDeclaration(): void {
    this.#next();
    for (;;) {
      this.#expectIdent("a variable name after Перем");
      if (this.#isKeyword("EXPORT")) this.#next();
      if (!this.#isPunct(",")) break;
      this.#next();
    }
    this.#expectSemicolon();
  }

  /**
   * Statements up to one of `ends` (not consumed). Every statement but the last before the end needs ";".
   * `opened` names the block for messages ("Если on line 12").
   */
  #statements(ends: ReadonlySet<string>, opened = "the module"): void {
    for (;;) {
      while (this.#isPunct(";")) this.#next(); // empty statements
      const token = this.#peek();
      if (token.kind === "eof") {
        if (ends.has("EOF")) return;
        throw new BslSyntaxError(
          token.line,
          `the module ends inside ${opened}: ${[...ends].map(russian).join(" or ")} expected`,
        );
      }
      if (token.kind === "keyword" && BLOCK_ENDS.has(token.keyword)) {
        if (ends.has(token.keyword)) return;
        throw new BslSyntaxError(
          token.line,
          `${describe(token)} here, but ${opened} is still open: ${[...ends].map(russian).join(" or ")} expected`,
        );
      }
      if (
        ends.has("EOF") &&
        (token.keyword === "PROCEDURE" || token.keyword === "FUNCTION" || token.keyword === "VAR")
      ) {
        return;
      }
      if (token.keyword === "PROCEDURE" || token.keyword === "FUNCTION") {
        throw new BslSyntaxError(
          token.line,
          `${describe(token)} inside ${opened}: ${[...ends].map(russian).join(" or ")} expected before it`,
        );
      }
      this.#statement();
      const after = this.#peek();
      if (this.#isPunct(";")) {
        this.#next();
        continue;
      }
      if (after.kind === "eof" || (after.kind === "keyword" && BLOCK_ENDS.has(after.keyword))) continue;
      const previous = this.#tokens[this.#pos - 1];
      throw new BslSyntaxError(
        previous?.line ?? after.line,
        `";" expected after the statement, got ${describe(after)}`,
      );
    }
  }

  #statement(): void {
    const token = this.#peek();
    switch (token.keyword) {
      case "IF":
        this.#ifStatement();
        return;
      case "FOR":
        this.#forStatement();
        return;
      case "WHILE":
        this.#next();
        this.#expression();
        this.#expectKeyword("DO", "Цикл after the Пока condition");
        this.#statements(new Set(["ENDDO"]), `Пока on line ${token.line}`);
        this.#expectKeyword("ENDDO", "КонецЦикла");
        return;
      case "TRY":
        this.#next();
        this.#statements(new Set(["EXCEPT"]), `Попытка on line ${token.line}`);
        this.#expectKeyword("EXCEPT", "Исключение");
        this.#statements(new Set(["ENDTRY"]), `Попытка on line ${token.line}`);
        this.#expectKeyword("ENDTRY", "КонецПопытки");
        return;
      case "RETURN":
        this.#next();
        if (!this.#atStatementEnd()) {
          if (!this.#inFunction) throw new BslSyntaxError(token.line, "Возврат with a value inside a Процедура");
          this.#expression();
        }
        return;
      case "RAISE":
        this.#next();
        if (!this.#atStatementEnd()) this.#expression();
        return;
      case "BREAK":
      case "CONTINUE":
        this.#next();
        return;
      case "VAR":
        throw new BslSyntaxError(token.line, "Перем must come before the statements of a method");
    }
    if (token.kind !== "ident") {
      throw new BslSyntaxError(token.line, `a statement cannot start with ${describe(token)}`);
    }
    const endsWithCall = this.#postfixChain();
    if (this.#isPunct("=")) {
      this.#next();
      this.#expression();
      return;
    }
    if (!endsWithCall) {
      throw new BslSyntaxError(
        token.line,
        `a statement must be an assignment or a call, got ${describe(this.#peek())} after ${token.text}`,
      );
    }
  }

  #ifStatement(): void {
    const opened = `Если on line ${this.#next().line}`;
    this.#expression();
    this.#expectKeyword("THEN", "Тогда after the Если condition");
    const ends = new Set(["ELSIF", "ELSE", "ENDIF"]);
    this.#statements(ends, opened);
    while (this.#isKeyword("ELSIF")) {
      this.#next();
      this.#expression();
      this.#expectKeyword("THEN", "Тогда after the ИначеЕсли condition");
      this.#statements(ends, opened);
    }
    if (this.#isKeyword("ELSE")) {
      this.#next();
      this.#statements(new Set(["ENDIF"]), opened);
    }
    this.#expectKeyword("ENDIF", "КонецЕсли");
  }

  #forStatement(): void {
    const opened = `Для on line ${this.#next().line}`;
    if (this.#isKeyword("EACH")) {
      this.#next();
      this.#expectIdent("the loop variable after Для Каждого");
      this.#expectKeyword("IN", "Из after the loop variable");
      this.#expression();
    } else {
      this.#expectIdent("the loop variable after Для");
      this.#expectPunct("=", '"=" after the loop variable');
      this.#expression();
      this.#expectKeyword("TO", "По in Для … = … По …");
      this.#expression();
    }
    this.#expectKeyword("DO", "Цикл");
    this.#statements(new Set(["ENDDO"]), opened);
    this.#expectKeyword("ENDDO", "КонецЦикла");
  }

  #atStatementEnd(): boolean {
    const token = this.#peek();
    return this.#isPunct(";") || token.kind === "eof" || (token.kind === "keyword" && BLOCK_ENDS.has(token.keyword));
  }

  /** Name ( .Name | [expr] | (args) )*; true when the chain ends with a call. */
  #postfixChain(): boolean {
    this.#next(); // the identifier
    let call = false;
    for (;;) {
      if (this.#isPunct(".")) {
        const dot = this.#next();
        const member = this.#peek();
        // After "." any word is a member name, reserved or not (Объект.Цикл, Запрос.Выполнить), unless
        // a block keyword on a later line shows that the member is simply missing.
        if (!isMemberName(member, dot)) {
          throw new BslSyntaxError(dot.line, `a name expected after ".", got ${describe(member)}`);
        }
        this.#next();
        call = false;
      } else if (this.#isPunct("[")) {
        this.#next();
        this.#expression();
        this.#expectPunct("]", '"]"');
        call = false;
      } else if (this.#isPunct("(")) {
        this.#arguments();
        call = true;
      } else {
        return call;
      }
    }
  }

  /** "(" [arg] ("," [arg])* ")": an argument may be left out (ЗаписьЖурналаРегистрации(А, Б, , Г)). */
  #arguments(): void {
    const open = this.#expectPunct("(", '"("');
    if (this.#isPunct(")")) {
      this.#next();
      return;
    }
    for (;;) {
      if (!this.#isPunct(",") && !this.#isPunct(")")) this.#expression();
      if (this.#isPunct(",")) {
        this.#next();
        continue;
      }
      if (this.#isPunct(")")) {
        this.#next();
        return;
      }
      const got = this.#peek();
      throw new BslSyntaxError(
        got.line,
        `"," or ")" expected in the arguments opened on line ${open.line}, got ${describe(got)}`,
      );
    }
  }

  #expression(): void {
    this.#andExpression();
    while (this.#isKeyword("OR")) {
      this.#next();
      this.#andExpression();
    }
  }

  #andExpression(): void {
    this.#notExpression();
    while (this.#isKeyword("AND")) {
      this.#next();
      this.#notExpression();
    }
  }

  #notExpression(): void {
    while (this.#isKeyword("NOT")) this.#next();
    this.#comparison();
  }

  #comparison(): void {
    this.#additive();
    while (this.#peek().kind === "punct" && COMPARISONS.has(this.#peek().text)) {
      this.#next();
      this.#additive();
    }
  }

  #additive(): void {
    this.#multiplicative();
    while (this.#isPunct("+") || this.#isPunct("-")) {
      this.#next();
      this.#multiplicative();
    }
  }

  #multiplicative(): void {
    this.#unary();
    while (this.#isPunct("*") || this.#isPunct("/") || this.#isPunct("%")) {
      this.#next();
      this.#unary();
    }
  }

  #unary(): void {
    while (this.#isPunct("-") || this.#isPunct("+")) this.#next();
    this.#primary();
  }

  #primary(): void {
    const token = this.#peek();
    if (["number", "string", "date"].includes(token.kind)) {
      this.#next();
      // A value can be indexed or called on only through a name; "abc"[1] is not BSL.
      return;
    }
    if (["TRUE", "FALSE", "UNDEFINED", "NULL"].includes(token.keyword)) {
      this.#next();
      return;
    }
    if (token.keyword === "NEW") {
      this.#next();
      if (this.#isPunct("(")) {
        this.#arguments(); // Новый("ТипЗначения", Параметры)
      } else {
        this.#expectIdent("a type name after Новый");
        if (this.#isPunct("(")) this.#arguments();
      }
      this.#postfixAfterValue();
      return;
    }
    if (this.#isPunct("?")) {
      this.#next();
      const open = this.#expectPunct("(", '"(" after "?"');
      this.#expression();
      this.#expectPunct(",", `"," in ?(…) opened on line ${open.line}`);
      this.#expression();
      this.#expectPunct(",", `"," in ?(…) opened on line ${open.line}`);
      this.#expression();
      this.#expectPunct(")", `")" closing ?(…) opened on line ${open.line}`);
      return;
    }
    if (this.#isPunct("(")) {
      const open = this.#next();
      this.#expression();
      this.#expectPunct(")", `")" closing "(" of line ${open.line}`);
      this.#postfixAfterValue();
      return;
    }
    if (token.kind === "ident") {
      this.#postfixChain();
      return;
    }
    throw new BslSyntaxError(token.line, `an expression expected, got ${describe(token)}`);
  }

  /** (Новый Запрос(Текст)).Выполнить(): members and calls on a parenthesised value or a new object. */
  #postfixAfterValue(): void {
    while (this.#isPunct(".") || this.#isPunct("[") || this.#isPunct("(")) {
      if (this.#isPunct(".")) {
        const dot = this.#next();
        const member = this.#peek();
        if (!isMemberName(member, dot)) {
          throw new BslSyntaxError(dot.line, `a name expected after ".", got ${describe(member)}`);
        }
        this.#next();
      } else if (this.#isPunct("[")) {
        this.#next();
        this.#expression();
        this.#expectPunct("]", '"]"');
      } else this.#arguments();
    }
  }

  #peek(): Token {
    return this.#tokens[this.#pos] ?? (this.#tokens[this.#tokens.length - 1] as Token);
  }

  #next(): Token {
    const token = this.#peek();
    if (token.kind !== "eof") this.#pos += 1;
    return token;
  }

  #isKeyword(keyword: string): boolean {
    const token = this.#peek();
    return token.kind === "keyword" && token.keyword === keyword;
  }

  #isPunct(text: string): boolean {
    const token = this.#peek();
    return token.kind === "punct" && token.text === text;
  }

  #expectKeyword(keyword: string, what: string): Token {
    if (!this.#isKeyword(keyword)) {
      const got = this.#peek();
      throw new BslSyntaxError(got.line, `${what} expected, got ${describe(got)}`);
    }
    return this.#next();
  }

  #expectPunct(text: string, what: string): Token {
    if (!this.#isPunct(text)) {
      const got = this.#peek();
      throw new BslSyntaxError(got.line, `${what} expected, got ${describe(got)}`);
    }
    return this.#next();
  }

  #expectIdent(what: string): Token {
    const token = this.#peek();
    if (token.kind !== "ident") throw new BslSyntaxError(token.line, `${what} expected, got ${describe(token)}`);
    return this.#next();
  }

  #expectSemicolon(): void {
    if (!this.#isPunct(";")) {
      const previous = this.#tokens[this.#pos - 1];
      throw new BslSyntaxError(previous?.line ?? this.#peek().line, `";" expected, got ${describe(this.#peek())}`);
    }
    this.#next();
  }
}

/** #Область/#КонецОбласти, #Если/#ИначеЕсли/#Иначе/#КонецЕсли, #Удаление/#Вставка pair up and nest. */
function checkPreprocessor(tokens: readonly Token[]): void {
  const open: Array<{ kind: string; line: number }> = [];
  for (const token of tokens) {
    if (token.kind !== "preproc") continue;
    const word = (/^[\p{L}_]+/u.exec(token.text)?.[0] ?? "").toLowerCase();
    const opening = PREPROC_OPEN[word];
    const closing = PREPROC_CLOSE[word];
    if (opening === "region" && !/^[\p{L}_]+\s+[\p{L}_][\p{L}\p{N}_]*\s*$/u.test(token.text)) {
      throw new BslSyntaxError(token.line, `#${token.text}: a region needs one name`);
    }
    if (opening === "if" && !/\s(тогда|then)\s*$/iu.test(token.text)) {
      throw new BslSyntaxError(token.line, `#${token.text}: Тогда expected at the end`);
    }
    if (opening !== undefined) open.push({ kind: opening, line: token.line });
    else if (closing !== undefined) {
      const last = open.pop();
      if (last === undefined) throw new BslSyntaxError(token.line, `#${token.text} without an opening instruction`);
      if (last.kind !== closing) {
        throw new BslSyntaxError(token.line, `#${token.text} closes the ${last.kind} opened on line ${last.line}`);
      }
    } else if (!["иначеесли", "elsif", "иначе", "else"].includes(word)) {
      throw new BslSyntaxError(token.line, `unknown preprocessor instruction #${token.text}`);
    } else if (open[open.length - 1]?.kind !== "if") {
      throw new BslSyntaxError(token.line, `#${token.text} outside #Если`);
    }
  }
  const unclosed = open.pop();
  if (unclosed !== undefined) {
    throw new BslSyntaxError(unclosed.line, `#${unclosed.kind === "region" ? "Область" : "Если"} is never closed`);
  }
}

const STRUCTURE_KEYWORDS = new Set([...BLOCK_ENDS, "PROCEDURE", "FUNCTION", "IF", "FOR", "WHILE", "TRY", "RETURN"]);

function isMemberName(member: Token, dot: Token): boolean {
  if (member.kind === "ident") return true;
  if (member.kind !== "keyword") return false;
  return member.line === dot.line || !STRUCTURE_KEYWORDS.has(member.keyword);
}

const RUSSIAN: Readonly<Record<string, string>> = {
  ENDPROCEDURE: "КонецПроцедуры",
  ENDFUNCTION: "КонецФункции",
  ELSIF: "ИначеЕсли",
  ELSE: "Иначе",
  ENDIF: "КонецЕсли",
  ENDDO: "КонецЦикла",
  EXCEPT: "Исключение",
  ENDTRY: "КонецПопытки",
  EOF: "the end of the module",
};

function russian(keyword: string): string {
  return RUSSIAN[keyword] ?? keyword;
}

function describe(token: Token): string {
  if (token.kind === "eof") return "the end of the module";
  if (token.kind === "string") return "a string";
  return `"${token.text}"`;
}
