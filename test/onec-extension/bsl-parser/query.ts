/**
 * A recursive-descent parser for the 1C query language as our modules write it: ВЫБРАТЬ
 * [РАЗРЕШЕННЫЕ] [РАЗЛИЧНЫЕ] [ПЕРВЫЕ n] fields [ПОМЕСТИТЬ t] ИЗ sources with joins, ГДЕ,
 * СГРУППИРОВАТЬ ПО, ИМЕЮЩИЕ, УПОРЯДОЧИТЬ ПО, ОБЪЕДИНИТЬ [ВСЕ], batches split by ";". Conditions:
 * И/ИЛИ/НЕ, comparisons, В (…) / В ИЕРАРХИИ, ПОДОБНО, МЕЖДУ, ЕСТЬ [НЕ] NULL, ЗНАЧЕНИЕ(…), ВЫБОР.
 * Russian and English keywords. Builds no tree; reports the first error with its line in the text.
 */

export interface QueryProblem {
  /** 0-based line inside the query text (the BSL string's n-th line). */
  readonly lineIndex: number;
  readonly message: string;
}

interface QToken {
  readonly kind: "word" | "number" | "string" | "param" | "punct" | "eof";
  readonly text: string;
  /** Canonical upper-case Russian spelling for keywords, "" otherwise. */
  readonly keyword: string;
  readonly lineIndex: number;
}

class QueryError extends Error {
  readonly lineIndex: number;

  constructor(lineIndex: number, message: string) {
    super(message);
    this.lineIndex = lineIndex;
  }
}

const KEYWORDS: ReadonlyMap<string, string> = new Map(
  (
    [
      ["ВЫБРАТЬ", "select"],
      ["РАЗРЕШЕННЫЕ", "allowed"],
      ["РАЗЛИЧНЫЕ", "distinct"],
      ["ПЕРВЫЕ", "top"],
      ["КАК", "as"],
      ["ИЗ", "from"],
      ["ГДЕ", "where"],
      ["И", "and"],
      ["ИЛИ", "or"],
      ["НЕ", "not"],
      ["В", "in"],
      ["ИЕРАРХИИ", "hierarchy"],
      ["ПОДОБНО", "like"],
      ["МЕЖДУ", "between"],
      ["ЕСТЬ", "is"],
      ["NULL"],
      ["ИСТИНА", "true"],
      ["ЛОЖЬ", "false"],
      ["НЕОПРЕДЕЛЕНО", "undefined"],
      ["ЗНАЧЕНИЕ", "value"],
      ["ВЫБОР", "case"],
      ["КОГДА", "when"],
      ["ТОГДА", "then"],
      ["ИНАЧЕ", "else"],
      ["КОНЕЦ", "end"],
      ["ЛЕВОЕ", "left"],
      ["ПРАВОЕ", "right"],
      ["ПОЛНОЕ", "full"],
      ["ВНУТРЕННЕЕ", "inner"],
      ["ВНЕШНЕЕ", "outer"],
      ["СОЕДИНЕНИЕ", "join"],
      ["ПО", "on", "by"],
      ["СГРУППИРОВАТЬ", "group"],
      ["ИМЕЮЩИЕ", "having"],
      ["УПОРЯДОЧИТЬ", "order"],
      ["ВОЗР", "asc"],
      ["УБЫВ", "desc"],
      ["ОБЪЕДИНИТЬ", "union"],
      ["ВСЕ", "all"],
      ["ПОМЕСТИТЬ", "into"],
      ["ДЛЯ", "for"],
      ["ИЗМЕНЕНИЯ", "update"],
    ] as const
  ).flatMap(([canonical, ...others]) =>
    [canonical, ...others].map((spelling) => [spelling.toLowerCase(), canonical] as const),
  ),
);

/** Keywords that end an expression or a field list: never a name in these positions. */
const CLAUSE_WORDS = new Set([
  "ИЗ",
  "ГДЕ",
  "СГРУППИРОВАТЬ",
  "ИМЕЮЩИЕ",
  "УПОРЯДОЧИТЬ",
  "ОБЪЕДИНИТЬ",
  "ПОМЕСТИТЬ",
  "ЛЕВОЕ",
  "ПРАВОЕ",
  "ПОЛНОЕ",
  "ВНУТРЕННЕЕ",
  "СОЕДИНЕНИЕ",
  "КАК",
  "ПО",
  "ДЛЯ",
  "КОГДА",
  "ТОГДА",
  "ИНАЧЕ",
  "КОНЕЦ",
]);

/** A string literal is taken for a query when its first word is ВЫБРАТЬ / SELECT. */
export function looksLikeQuery(text: string): boolean {
  return /^\s*(выбрать|select)\s/iu.test(text);
}

export function checkQuery(text: string): QueryProblem | undefined {
  try {
    new QueryParser(lex(text)).batch();
    return undefined;
  } catch (error) {
    if (error instanceof QueryError) return { lineIndex: error.lineIndex, message: error.message };
    throw error;
  }
}

function lex(text: string): QToken[] {
  const tokens: QToken[] = [];
  let i = 0;
  let lineIndex = 0;
  while (i < text.length) {
    const ch = text[i] ?? "";
    if (ch === "\n") {
      lineIndex += 1;
      i += 1;
    } else if (/\s/u.test(ch)) {
      i += 1;
    } else if (text.startsWith("//", i)) {
      while (i < text.length && text[i] !== "\n") i += 1;
    } else if (ch === '"') {
      const end = text.indexOf('"', i + 1);
      if (end < 0) throw new QueryError(lineIndex, "unterminated string in the query");
      tokens.push({ kind: "string", text: text.slice(i + 1, end), keyword: "", lineIndex });
      i = end + 1;
    } else if (ch === "&") {
      const match = /^&([\p{L}_][\p{L}\p{N}_]*)/u.exec(text.slice(i));
      if (match === null) throw new QueryError(lineIndex, '"&" without a parameter name');
      tokens.push({ kind: "param", text: match[1] ?? "", keyword: "", lineIndex });
      i += match[0].length;
    } else if (/[0-9]/.test(ch)) {
      const match = /^[0-9]+(\.[0-9]+)?/.exec(text.slice(i));
      tokens.push({ kind: "number", text: match?.[0] ?? ch, keyword: "", lineIndex });
      i += match?.[0].length ?? 1;
    } else if (/[\p{L}_]/u.test(ch)) {
      const match = /^[\p{L}_][\p{L}\p{N}_]*/u.exec(text.slice(i));
      const word = match?.[0] ?? ch;
      tokens.push({ kind: "word", text: word, keyword: KEYWORDS.get(word.toLowerCase()) ?? "", lineIndex });
      i += word.length;
    } else {
      const punct = ["<>", "<=", ">=", "(", ")", ".", ",", ";", "=", "<", ">", "+", "-", "*", "/"].find((p) =>
        text.startsWith(p, i),
      );
      if (punct === undefined) throw new QueryError(lineIndex, `unexpected character "${ch}" in the query`);
      tokens.push({ kind: "punct", text: punct, keyword: "", lineIndex });
      i += punct.length;
    }
  }
  tokens.push({ kind: "eof", text: "", keyword: "", lineIndex });
  return tokens;
}

class QueryParser {
  readonly #tokens: QToken[];
  #pos = 0;

  constructor(tokens: QToken[]) {
    this.#tokens = tokens;
  }

  batch(): void {
    for (;;) {
      this.#query();
      if (this.#isPunct(";")) {
        this.#next();
        if (this.#peek().kind === "eof") return;
        continue;
      }
      if (this.#peek().kind !== "eof") this.#fail(`unexpected ${describe(this.#peek())} after the query`);
      return;
    }
  }

  #query(): void {
    this.#expectKeyword("ВЫБРАТЬ");
    if (this.#isKeyword("РАЗРЕШЕННЫЕ")) this.#next();
    if (this.#isKeyword("РАЗЛИЧНЫЕ")) this.#next();
    if (this.#isKeyword("ПЕРВЫЕ")) {
      this.#next();
      if (this.#peek().kind !== "number") this.#fail(`a number expected after ПЕРВЫЕ, got ${describe(this.#peek())}`);
      this.#next();
    }
    this.#list(() => this.#selectItem());
    if (this.#isKeyword("ПОМЕСТИТЬ")) {
      this.#next();
      this.#name("a temporary table name after ПОМЕСТИТЬ");
    }
    if (this.#isKeyword("ИЗ")) {
      this.#next();
      this.#list(() => this.#sourceWithJoins());
    }
    if (this.#isKeyword("ГДЕ")) {
      this.#next();
      this.#expression();
    }
    if (this.#isKeyword("СГРУППИРОВАТЬ")) {
      this.#next();
      this.#expectKeyword("ПО");
      this.#list(() => this.#expression());
    }
    if (this.#isKeyword("ИМЕЮЩИЕ")) {
      this.#next();
      this.#expression();
    }
    if (this.#isKeyword("ОБЪЕДИНИТЬ")) {
      this.#next();
      if (this.#isKeyword("ВСЕ")) this.#next();
      this.#query();
      return;
    }
    if (this.#isKeyword("УПОРЯДОЧИТЬ")) {
      this.#next();
      this.#expectKeyword("ПО");
      this.#list(() => {
        this.#expression();
        if (this.#isKeyword("ВОЗР") || this.#isKeyword("УБЫВ")) this.#next();
      });
    }
    if (this.#isKeyword("ДЛЯ")) {
      this.#next();
      this.#expectKeyword("ИЗМЕНЕНИЯ");
      if (this.#peek().kind === "word" && this.#peek().keyword === "") this.#path();
    }
  }

  #selectItem(): void {
    if (this.#isPunct("*")) {
      this.#next();
      return;
    }
    this.#expression();
    this.#alias(false);
  }

  #sourceWithJoins(): void {
    this.#source();
    for (;;) {
      const kind = this.#peek().keyword;
      if (!["ЛЕВОЕ", "ПРАВОЕ", "ПОЛНОЕ", "ВНУТРЕННЕЕ", "СОЕДИНЕНИЕ"].includes(kind)) return;
      if (kind !== "СОЕДИНЕНИЕ") this.#next();
      if (this.#isKeyword("ВНЕШНЕЕ")) this.#next();
      this.#expectKeyword("СОЕДИНЕНИЕ");
      this.#source();
      this.#expectKeyword("ПО");
      this.#expression();
    }
  }

  #source(): void {
    if (this.#isPunct("(")) {
      this.#next();
      this.#query();
      this.#expectPunct(")");
      this.#alias(true);
      return;
    }
    this.#path();
    if (this.#isPunct("(")) this.#arguments(); // virtual tables: РегистрСведений.Х.СрезПоследних(&Дата)
    this.#alias(false);
  }

  /** [КАК] name; an alias after КАК is required, and must be a name, not a clause word. */
  #alias(required: boolean): void {
    if (this.#isKeyword("КАК")) {
      this.#next();
      this.#name("an alias after КАК");
      return;
    }
    if (required) this.#fail(`КАК and an alias expected, got ${describe(this.#peek())}`);
  }

  #expression(): void {
    this.#and();
    while (this.#isKeyword("ИЛИ")) {
      this.#next();
      this.#and();
    }
  }

  #and(): void {
    this.#not();
    while (this.#isKeyword("И")) {
      this.#next();
      this.#not();
    }
  }

  #not(): void {
    while (this.#isKeyword("НЕ")) this.#next();
    this.#predicate();
  }

  #predicate(): void {
    this.#additive();
    for (;;) {
      const token = this.#peek();
      if (token.kind === "punct" && ["=", "<>", "<", ">", "<=", ">="].includes(token.text)) {
        this.#next();
        this.#additive();
        continue;
      }
      const negated = this.#isKeyword("НЕ");
      if (negated) this.#next();
      if (this.#isKeyword("В")) {
        this.#next();
        if (this.#isKeyword("ИЕРАРХИИ")) this.#next();
        this.#expectPunct("(");
        if (this.#isKeyword("ВЫБРАТЬ")) this.#query();
        else this.#list(() => this.#expression());
        this.#expectPunct(")");
      } else if (this.#isKeyword("ПОДОБНО")) {
        this.#next();
        this.#additive();
      } else if (this.#isKeyword("МЕЖДУ")) {
        this.#next();
        this.#additive();
        this.#expectKeyword("И");
        this.#additive();
      } else if (!negated && this.#isKeyword("ЕСТЬ")) {
        this.#next();
        if (this.#isKeyword("НЕ")) this.#next();
        this.#expectKeyword("NULL");
      } else if (negated) {
        this.#fail(`В, ПОДОБНО or МЕЖДУ expected after НЕ, got ${describe(this.#peek())}`);
      } else return;
    }
  }

  #additive(): void {
    this.#unary();
    while (this.#isPunct("+") || this.#isPunct("-") || this.#isPunct("*") || this.#isPunct("/")) {
      this.#next();
      this.#unary();
    }
  }

  #unary(): void {
    if (this.#isPunct("-")) this.#next();
    this.#primary();
  }

  #primary(): void {
    const token = this.#peek();
    if (token.kind === "number" || token.kind === "string" || token.kind === "param") {
      this.#next();
      return;
    }
    if (["ИСТИНА", "ЛОЖЬ", "NULL", "НЕОПРЕДЕЛЕНО"].includes(token.keyword)) {
      this.#next();
      return;
    }
    if (token.keyword === "ЗНАЧЕНИЕ") {
      this.#next();
      this.#expectPunct("(");
      this.#path();
      this.#expectPunct(")");
      return;
    }
    if (token.keyword === "ВЫБОР") {
      this.#next();
      if (!this.#isKeyword("КОГДА")) this.#fail(`КОГДА expected after ВЫБОР, got ${describe(this.#peek())}`);
      while (this.#isKeyword("КОГДА")) {
        this.#next();
        this.#expression();
        this.#expectKeyword("ТОГДА");
        this.#expression();
      }
      if (this.#isKeyword("ИНАЧЕ")) {
        this.#next();
        this.#expression();
      }
      this.#expectKeyword("КОНЕЦ");
      return;
    }
    if (this.#isPunct("(")) {
      this.#next();
      if (this.#isKeyword("ВЫБРАТЬ")) this.#query();
      else this.#expression();
      this.#expectPunct(")");
      return;
    }
    if (token.kind === "word" && !CLAUSE_WORDS.has(token.keyword)) {
      this.#path();
      if (this.#isPunct("(")) this.#arguments(); // КОЛИЧЕСТВО(*), ЕСТЬNULL(…), ПРЕДСТАВЛЕНИЕ(…)
      return;
    }
    this.#fail(`an expression expected, got ${describe(token)}`);
  }

  #arguments(): void {
    this.#expectPunct("(");
    if (this.#isPunct(")")) {
      this.#next();
      return;
    }
    if (this.#isKeyword("РАЗЛИЧНЫЕ")) this.#next();
    // An argument may be left out: РегистрСведений.Р.СрезПоследних(&Дата, ).
    this.#list(() => {
      if (this.#isPunct("*")) this.#next();
      else if (!this.#isPunct(",") && !this.#isPunct(")")) this.#expression();
    });
    this.#expectPunct(")");
  }

  /** Name(.Name)*: a table, a field, or a predefined value path. */
  #path(): void {
    this.#name("a name");
    while (this.#isPunct(".")) {
      this.#next();
      const token = this.#peek();
      if (token.kind !== "word" || CLAUSE_WORDS.has(token.keyword)) {
        this.#fail(`a name expected after ".", got ${describe(token)}`);
      }
      this.#next();
    }
  }

  #name(what: string): void {
    const token = this.#peek();
    if (token.kind !== "word" || CLAUSE_WORDS.has(token.keyword) || token.keyword === "ВЫБРАТЬ") {
      this.#fail(`${what} expected, got ${describe(token)}`);
    }
    this.#next();
  }

  #list(item: () => void): void {
    item();
    while (this.#isPunct(",")) {
      this.#next();
      item();
    }
  }

  #peek(): QToken {
    return this.#tokens[this.#pos] ?? (this.#tokens[this.#tokens.length - 1] as QToken);
  }

  #next(): QToken {
    const token = this.#peek();
    if (token.kind !== "eof") this.#pos += 1;
    return token;
  }

  #isKeyword(keyword: string): boolean {
    const token = this.#peek();
    return token.kind === "word" && token.keyword === keyword;
  }

  #isPunct(text: string): boolean {
    const token = this.#peek();
    return token.kind === "punct" && token.text === text;
  }

  #expectKeyword(keyword: string): void {
    if (!this.#isKeyword(keyword)) this.#fail(`${keyword} expected, got ${describe(this.#peek())}`);
    this.#next();
  }

  #expectPunct(text: string): void {
    if (!this.#isPunct(text)) this.#fail(`"${text}" expected, got ${describe(this.#peek())}`);
    this.#next();
  }

  #fail(message: string): never {
    throw new QueryError(this.#peek().lineIndex, message);
  }
}

function describe(token: QToken): string {
  if (token.kind === "eof") return "the end of the query";
  if (token.kind === "string") return "a string";
  if (token.kind === "param") return `&${token.text}`;
  return `"${token.text}"`;
}
