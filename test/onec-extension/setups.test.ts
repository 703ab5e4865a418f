import { readFileSync } from "node:fs";
import { code as isoCurrency } from "currency-codes";
import { describe, expect, it } from "vitest";
import { PROCESSING_ERROR, REFUSAL_CODES } from "../../src/onec/contract/codes.ts";
import { callsIn, type Item, lexBsl, type MethodInfo, moduleStructure, type Token } from "./bsl-lite.ts";
import { parseBsl } from "./bsl-parser/parser.ts";
import { extensionFiles } from "./extension-tree.ts";

/**
 * Pins for issue 20: the setups of a real УТ 11.5 / ERP 2.5 base the 1C extension must survive, read from the BSL
 * with the project's own lexer and structure scanner (bsl-lite.ts; the grammar check is bsl-parser.test.ts).
 * Each check failed on the 1.1.0.1 modules: safe mode, discounts marked calculated, terms from the agreement
 * before the site's prices, supply variants from settings, 503 only for temporary causes, a 422 code per known
 * cause, keys «.» and «..», dates past year 3999, a customer who must be a client and is created once.
 */

const files = extensionFiles();
const README = readFileSync(new URL("../../1c/README.md", import.meta.url), "utf8");
const ORDERS = "CommonModules/ИнтСайт_ОбработкаЗаказов/Ext/Module.bsl";
const ANSWERS = "CommonModules/ИнтСайт_HTTPОтветы/Ext/Module.bsl";
const SERVICE = "HTTPServices/ИнтСайт_Интеграция/Ext/Module.bsl";

interface Module {
  readonly tokens: readonly Token[];
  readonly methods: readonly MethodInfo[];
}

function moduleAt(rel: string): Module {
  const file = files.find((candidate) => candidate.rel === rel);
  if (file === undefined) throw new Error(`${rel} is missing from 1c/extension`);
  const lexed = lexBsl(file.text);
  return { tokens: lexed.tokens, methods: moduleStructure(lexed).methods };
}

function method(module: Module, name: string): MethodInfo {
  const found = module.methods.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no method ${name}`);
  return found;
}

/** Tokens as compact source: no spaces, strings quoted («<>» is two tokens, so spacing is not kept). */
function compact(tokens: readonly Token[]): string {
  return tokens.map((token) => (token.kind === "string" ? `"${token.text}"` : token.text)).join("");
}

function statements(body: readonly Item[]): Token[][] {
  return body.flatMap((item) => (item.type === "stmt" ? [item.tokens as Token[]] : []));
}

/** Index in the body of the first statement that calls `name` (Имя(…) or Объект.Имя(…)); -1 if none. */
function callIndex(body: readonly Item[], name: string): number {
  return body.findIndex((item) => item.type === "stmt" && callsIn(item.tokens).some((call) => call.name === name));
}

/** Index of the first statement assigning `<anything>.member = …`; -1 if none. */
function assignIndex(body: readonly Item[], member: string): number {
  return body.findIndex(
    (item) =>
      item.type === "stmt" &&
      item.tokens.some(
        (token, index) =>
          token.text === member && item.tokens[index - 1]?.text === "." && item.tokens[index + 1]?.text === "=",
      ),
  );
}

/** The conditions (Если/ИначеЕсли tokens) of the branches that enclose the body item at `index`, innermost first. */
function enclosingConditions(body: readonly Item[], index: number): string[] {
  const conditions: string[] = [];
  let depth = 0;
  let skipBranches = false;
  for (let i = index - 1; i >= 0; i -= 1) {
    const item = body[i];
    if (item?.type !== "kw") continue;
    if (["ENDIF", "ENDDO", "ENDTRY"].includes(item.keyword as string)) depth += 1;
    else if (["IF", "FOR", "WHILE", "TRY"].includes(item.keyword as string)) {
      if (depth > 0) depth -= 1;
      else {
        if (item.keyword === "IF" && !skipBranches) conditions.push(conditionAfter(body, i));
        skipBranches = false;
      }
    } else if (depth === 0 && (item.keyword === "ELSIF" || item.keyword === "ELSE")) {
      // Only the nearest branch of this Если encloses the item; earlier ИначеЕсли conditions are not its own.
      if (item.keyword === "ELSIF" && !skipBranches) conditions.push(conditionAfter(body, i));
      skipBranches = true;
    }
  }
  return conditions;
}

function conditionAfter(body: readonly Item[], kwIndex: number): string {
  const next = body[kwIndex + 1];
  return next?.type === "stmt" ? compact(next.tokens) : "";
}

/** String arguments right after `name(` in the tokens: ВызватьОтказ("CODE", …) gives CODE. */
function firstStringArguments(tokens: readonly Token[], name: string, position = 0): string[] {
  const found: string[] = [];
  tokens.forEach((token, index) => {
    if (token.text !== name || tokens[index + 1]?.text !== "(") return;
    const argument = tokens[index + 2 + position * 2];
    if (argument?.kind === "string") found.push(argument.text);
  });
  return found;
}

/** The items of a body that produce a result of this kind: НовыйРезультат("Вид") or РезультатСОшибкой("Вид", …). */
function producers(body: readonly Item[], kind: string): number[] {
  const indexes: number[] = [];
  body.forEach((item, index) => {
    if (item.type !== "stmt") return;
    const made = [
      ...firstStringArguments(item.tokens, "НовыйРезультат"),
      ...firstStringArguments(item.tokens, "РезультатСОшибкой"),
    ];
    if (made.includes(kind)) indexes.push(index);
  });
  return indexes;
}

const orders = moduleAt(ORDERS);

describe("setups: the modules still parse", () => {
  it("with the project's BSL parser", () => {
    for (const rel of [ORDERS, ANSWERS, SERVICE]) {
      const result = parseBsl(files.find((file) => file.rel === rel)?.text ?? "");
      expect(result.ok ? "ok" : `${rel}:${result.problem.line}: ${result.problem.message}`).toBe("ok");
    }
  });
});

describe("setup: the extension attached in safe mode", () => {
  it("the module refuses with EXTENSION_SAFE_MODE, checking БезопасныйРежим() before the configuration is touched", () => {
    const check = orders.methods.find((candidate) =>
      statements(candidate.body).some((tokens) => tokens.some((token) => token.lower === "безопасныйрежим")),
    );
    expect(check, "a method must read БезопасныйРежим()").toBeDefined();
    const checker = method(orders, "ПроверитьБезопасныйРежим");
    const tokens = statements(checker.body).flat();
    expect(compact(tokens)).toContain("БезопасныйРежим()<>Ложь");
    expect(firstStringArguments(tokens, "ВызватьОтказ")).toEqual(["EXTENSION_SAFE_MODE"]);
    const run = method(orders, "ОбработатьСобытие").body;
    const checkAt = callIndex(run, "ПроверитьБезопасныйРежим");
    expect(checkAt).toBeGreaterThan(-1);
    expect(checkAt).toBeLessThan(callIndex(run, "СоздатьДокументыПоСобытию"));
    // GET /v1/health lists it in problems.
    const problems = statements(method(orders, "ПроблемыУстановки").body).flat();
    expect(problems.some((token) => token.lower === "безопасныйрежим")).toBe(true);
    expect(problems.some((token) => token.text === "EXTENSION_SAFE_MODE")).toBe(true);
  });

  it("the README states the same decision, with its source, and no longer recommends safe mode", () => {
    const section = /## Безопасный режим\n([\s\S]*?)\n## /u.exec(README)?.[1] ?? "";
    expect(section).toContain("снимите флажок «Безопасный режим»");
    expect(section).toContain("EXTENSION_SAFE_MODE");
    expect(section).toContain("УстановитьОтключениеБезопасногоРежима");
    expect(section).toMatch(/its\.1c\.ru/u);
    expect(README).not.toMatch(/«Безопасный режим» можно оставить включённым/u);
    expect(README).not.toMatch(/лучше\) держать в \*\*безопасном режиме\*\*/u);
  });
});

describe("setup: automatic discounts on", () => {
  it("the order's discounts are marked calculated, automatic discounts zeroed, the difference a manual discount", () => {
    const create = method(orders, "СоздатьЗаказКлиента").body;
    const marked = create.find(
      (item) => item.type === "stmt" && compact(item.tokens) === "Заказ.СкидкиРассчитаны=Истина",
    );
    expect(marked, "Заказ.СкидкиРассчитаны = Истина in СоздатьЗаказКлиента").toBeDefined();
    const prices = method(orders, "ПрименитьЦеныСайта").body;
    for (const column of ["СуммаАвтоматическойСкидки", "ПроцентАвтоматическойСкидки", "СуммаРучнойСкидки"]) {
      expect(assignIndex(prices, column), column).toBeGreaterThan(-1);
    }
  });

  it("each line and the total are compared with the site's, naming the line", () => {
    const compare = method(orders, "СверитьСуммыССайтом");
    const text = compact(statements(compare.body).flat());
    expect(text).toContain("СтрокаТоваров.СуммаСНДС<>Позиция.Сумма");
    expect(text).toContain("Позиция.Описание");
    expect(firstStringArguments(statements(compare.body).flat(), "ВызватьОтказ")).toEqual([
      "ORDER_NOT_VALID",
      "ORDER_NOT_VALID",
    ]);
  });
});

describe("setup: an agreement configured (or the partner's default one)", () => {
  it("the terms are filled by the order's own procedure after the agreement is set, and the site's prices after that", () => {
    const create = method(orders, "СоздатьЗаказКлиента").body;
    const agreement = assignIndex(create, "Соглашение");
    const terms = callIndex(create, "ЗаполнитьУсловияПродажПоСоглашению");
    const sitePrices = callIndex(create, "ПрименитьЦеныСайта");
    expect(agreement).toBeGreaterThan(-1);
    expect(terms).toBeGreaterThan(agreement);
    expect(sitePrices).toBeGreaterThan(terms);
    // The site's price is set only there: nothing assigns a line's price before the terms are filled.
    const priceSetters = orders.methods.filter((candidate) => assignIndex(candidate.body, "Цена") > -1);
    expect(priceSetters.map((candidate) => candidate.name)).toEqual(["ПрименитьЦеныСайта"]);
  });
});

describe("setup: services and delivery, order statuses", () => {
  it("no supply variant is hard-coded: it comes from the settings per line kind (services, goods by status)", () => {
    const hardCoded = orders.tokens.filter(
      (token, index) =>
        token.text === "ВариантыОбеспечения" &&
        orders.tokens[index + 1]?.text === "." &&
        orders.tokens[index + 2]?.kind === "word",
    );
    expect(hardCoded.map((token) => `line ${token.line}`)).toEqual([]);
    const prices = method(orders, "ПрименитьЦеныСайта").body;
    const variant = prices[assignIndex(prices, "ВариантОбеспечения")];
    expect(variant?.type === "stmt" ? callsIn(variant.tokens).map((call) => call.name) : []).toEqual([
      "ВариантОбеспеченияСтроки",
    ]);
    const chooser = statements(method(orders, "ВариантОбеспеченияСтроки").body).flat();
    for (const setting of ["ВариантОбеспеченияУслуг", "ВариантОбеспеченияТоваров", "ЭтоУслуга"]) {
      expect(chooser.some((token) => token.text === setting)).toBe(true);
    }
    const readers = statements(method(orders, "НастройкиИнтеграции").body).flat();
    for (const constant of ["ИнтСайт_ВариантОбеспеченияТоваров", "ИнтСайт_ВариантОбеспеченияУслуг"]) {
      expect(readers.some((token) => token.text === constant)).toBe(true);
    }
    // Status КОбеспечению takes the configuration's own default for goods, КОбеспечению: СоСклада (a stock
    // reserve) would refuse an order for goods not in free stock, which a shop sells every day.
    const byStatus = compact(statements(method(orders, "ВариантОбеспеченияПоСтатусу").body).flat());
    expect(byStatus).toContain('ИмяСтатуса="КОбеспечению"Возврат"КОбеспечению"');
    expect(byStatus).not.toContain('"СоСклада"');
    // Delivery is a service, whatever the item's kind.
    const create = statements(method(orders, "СоздатьЗаказКлиента").body);
    const delivery = create.find((tokens) => tokens.some((token) => token.text === "order.delivery"));
    expect(compact(delivery ?? [])).toContain('("order.delivery",СтоимостьДоставки,1,Истина)');
  });
});

describe("errors: classified, none looping", () => {
  it("503 UNAVAILABLE only for a lock conflict (issue 20: a lock is temporary), never the platform's error categories", () => {
    const all = orders.methods.flatMap((candidate) =>
      producers(candidate.body, "ВременноНедоступно").map((index) => ({ method: candidate, index })),
    );
    expect(all.map(({ method: m }) => m.name)).toEqual(["РезультатПоИсключению"]);
    const [only] = all;
    if (only === undefined) throw new Error("unreachable");
    expect(enclosingConditions(only.method.body, only.index).join(" | ")).toContain(
      'ВидИсключения(ИнформацияОбОшибке,Контекст)="Временное"',
    );
    const kind = method(orders, "ВидИсключения").body;
    const temporary = kind.flatMap((item, index) =>
      item.type === "stmt" && item.tokens[0]?.keyword === "RETURN" && item.tokens[1]?.text === "Временное"
        ? [enclosingConditions(kind, index).join(" | ")]
        : [],
    );
    expect(temporary.length).toBeGreaterThan(0);
    // A lock conflict: while waiting for our own lock, or one the platform reports inside the configuration's posting.
    for (const condition of temporary) expect(condition).toMatch(/ОжиданиеБлокировки|ЭтоКонфликтБлокировок\(/u);
    // КатегорияОшибки exists from 8.3.21; the extension's compatibility mode is 8.3.14, where an unknown
    // identifier stops the whole module from compiling.
    expect(orders.tokens.filter((token) => /^КатегорияОшибки/u.test(token.text))).toEqual([]);
  });

  it("an unknown error is 500 PROCESSING_ERROR with a FAILED record; the service's outer catch answers the same", () => {
    const result = method(orders, "РезультатПоИсключению").body;
    expect(producers(result, "ОшибкаОбработки")).toHaveLength(1);
    expect(firstStringArguments(statements(result).flat(), "РезультатСОшибкой", 1)).toContain("PROCESSING_ERROR");
    const run = statements(method(orders, "ОбработатьСобытие").body)
      .map((tokens) => compact(tokens))
      .join("\n");
    expect(run).toContain("ЗаписатьНеудачу(ПараметрыСобытия,Результат,СтатусОшибка(),");
    const answers = moduleAt(ANSWERS);
    const problem = statements(method(answers, "ОтветОшибкаОбработки").body).flat();
    const strings = problem.filter((token) => token.kind === "string").map((token) => token.text);
    for (const key of ["type", "title", "status", "detail", "code", "error", "application/problem+json; charset=utf-8"])
      expect(strings).toContain(key);
    const service = moduleAt(SERVICE);
    const outer = callsIn(statements(method(service, "ОтветНаНепредвиденнуюОшибку").body).flat());
    expect(outer.map((call) => call.name)).toContain("ОтветОшибкаОбработки");
    // 503 appears only in the answers for maintenance and for a temporary cause.
    const with503 = answers.methods.filter((candidate) =>
      statements(candidate.body).some((tokens) => tokens.some((token) => token.text === "503")),
    );
    expect(with503.map((candidate) => candidate.name).sort()).toEqual([
      "ОтветВременноНедоступен",
      "ОтветРежимОбслуживания",
      "ОтветСостояниеСервиса",
    ]);
  });

  it("every refusal code of contract 3 is produced by the module", () => {
    const codes = new Set([
      ...firstStringArguments(orders.tokens, "ВызватьОтказ"),
      ...firstStringArguments(orders.tokens, "РезультатСОшибкой", 1),
    ]);
    const expected = [...REFUSAL_CODES, PROCESSING_ERROR, "BAD_EVENT"];
    expect(expected.filter((code) => !codes.has(code))).toEqual([]);
    // Known causes are checked before posting, by rights, the closed period and the settlement order.
    const create = method(orders, "СоздатьЗаказКлиента").body;
    const post = callIndex(create, "ПровестиДокумент");
    expect(callIndex(create, "ПроверитьДатуЗапрета")).toBeGreaterThan(-1);
    expect(callIndex(create, "ПроверитьДатуЗапрета")).toBeLessThan(post);
    // The order takes its settlement order from its agreement when written: checked after posting, in the same
    // transaction (a refusal rolls the order back), before the payment is entered on it.
    expect(callIndex(create, "ПроверитьПорядокРасчетов")).toBeGreaterThan(post);
    const rights = statements(method(orders, "ПроверитьПраваНаДокументы").body).flat();
    expect(callsIn(rights).map((call) => call.name)).toContain("ПравоДоступа");
    const closed = statements(method(orders, "ПроверитьДатуЗапрета").body).flat();
    expect(callsIn(closed).map((call) => `${call.qualifier}.${call.name}`)).toContain(
      "ДатыЗапретаИзменения.ИзменениеЗапрещено",
    );
  });

  it("keys «.» and «..» are refused, as by the gateway", () => {
    const key = statements(method(orders, "КлючИдемпотентностиКорректен").body)
      .map((tokens) => compact(tokens))
      .join("\n");
    expect(key).toContain('Ключ="."ИлиКлюч=".."');
  });

  it("dates outside the years 1-3999 are BAD_EVENT, for occurred_at, order.created_at and payment.paid_at", () => {
    const check = statements(method(orders, "ОшибкаСтруктурыСобытия").body).flat();
    const strings = check.filter((token) => token.kind === "string").map((token) => token.text);
    for (const field of ["occurred_at", "created_at", "paid_at"]) expect(strings).toContain(field);
    expect(callsIn(check).map((call) => call.name)).toContain("РазборДатыISO");
    const parse = statements(method(orders, "РазборДатыISO").body).flat();
    expect(parse.some((token) => token.text === "3999")).toBe(true);
    // МестнаяДатаИзISO builds a Дата only from a parsed, in-range value.
    const local = method(orders, "МестнаяДатаИзISO").body;
    expect(callIndex(local, "РазборДатыISO")).toBeGreaterThan(-1);
    expect(callIndex(local, "РазборДатыISO")).toBeLessThan(callIndex(local, "МестноеВремя"));
  });

  it("the body and the time taken are written on SUCCEEDED, REJECTED and FAILED records", () => {
    for (const writer of ["ЗаписатьОбработанноеСобытие", "ЗаписатьНеудачу"]) {
      const body = method(orders, writer).body;
      expect(assignIndex(body, "ТелоСобытия"), writer).toBeGreaterThan(-1);
      expect(assignIndex(body, "ДлительностьМс"), writer).toBeGreaterThan(-1);
    }
  });
});

describe("setup: the customer", () => {
  it("a partner found by e-mail or phone must be a client (the query filters Клиент)", () => {
    const partnerQueries = orders.tokens.filter(
      (token) => token.kind === "string" && /ИЗ\s+Справочник\.Партнеры/u.test(token.text),
    );
    expect(partnerQueries.length).toBeGreaterThan(0);
    for (const query of partnerQueries) expect(query.text).toMatch(/ГДЕ[\s\S]*\.Клиент = ИСТИНА/u);
    // Партнеры is a hierarchy of items in УТ 11.5 (no folders), so the query language has no ЭтоГруппа for it.
    for (const query of partnerQueries) expect(query.text).not.toContain("ЭтоГруппа");
    const find = statements(method(orders, "НайтиПокупателя").body).flat();
    expect(firstStringArguments(find, "ВызватьОтказ")).toEqual(["CUSTOMER_NOT_CLIENT"]);
  });

  it("a new customer is created once per key: exclusive lock on ИнтСайт_КлючиПокупателей, read, create, write", () => {
    const byKey = method(orders, "ПокупательПоКлючу").body;
    const lockTarget = statements(byKey)
      .flat()
      .find((token) => token.kind === "string" && token.text === "РегистрСведений.ИнтСайт_КлючиПокупателей");
    expect(lockTarget).toBeDefined();
    const lock = byKey.findIndex(
      (item) => item.type === "stmt" && compact(item.tokens) === "Блокировка.Заблокировать()",
    );
    const read = callIndex(byKey, "ПокупательИзРегистра");
    const create = callIndex(byKey, "СоздатьПокупателя");
    const write = byKey.findIndex((item) => item.type === "stmt" && compact(item.tokens) === "Запись.Записать(Истина)");
    expect(lock).toBeGreaterThan(-1);
    expect(read).toBeGreaterThan(lock);
    expect(create).toBeGreaterThan(read);
    expect(write).toBeGreaterThan(create);
    expect(compact(statements(byKey).flat())).toContain("РежимБлокировкиДанных.Исключительный");
  });
});

describe("setup: a technical user under record-level restrictions (RLS)", () => {
  it("every query on the configuration's catalogs and documents reads only what the user may (РАЗРЕШЕННЫЕ)", () => {
    const queries = orders.tokens.filter(
      (token) => token.kind === "string" && /ИЗ\s+(Справочник|Документ)\./u.test(token.text),
    );
    expect(queries.length).toBeGreaterThanOrEqual(5);
    // A query without РАЗРЕШЕННЫЕ on a restricted table fails with "Недостаточно прав" for every event.
    expect(
      queries.filter((query) => !/^ВЫБРАТЬ\s+РАЗРЕШЕННЫЕ\s/u.test(query.text)).map((q) => `line ${q.line}`),
    ).toEqual([]);
  });
});

describe("setup: the agreement's organisation against the setting", () => {
  it("a different organisation after the terms are filled is a refusal SETTING_CONFLICT, never a silent override", () => {
    const create = method(orders, "СоздатьЗаказКлиента").body;
    const terms = callIndex(create, "ЗаполнитьУсловияПродажПоСоглашению");
    const conflict = create.findIndex(
      (item) => item.type === "stmt" && firstStringArguments(item.tokens, "ВызватьОтказ").includes("SETTING_CONFLICT"),
    );
    expect(conflict).toBeGreaterThan(terms);
    expect(assignIndex(create, "Организация")).toBe(-1);
  });
});

/** The pairs «alphabetic:numeric» of КодыВалютISO4217: the string the function splits, read from its tokens. */
function currencyTable(module: Module): [string, string][] {
  const table = method(module, "КодыВалютISO4217");
  const body = statements(table.body);
  const assignment = body.find((tokens) => tokens[0]?.text === "ПарыКодов" && tokens[1]?.text === "=");
  if (assignment === undefined) throw new Error("КодыВалютISO4217 assigns no ПарыКодов");
  // It is that string the function splits into the map, and nothing else goes into it.
  const text = compact(body.flat());
  expect(text).toContain('СтрРазделить(ПарыКодов,",",Ложь)');
  expect(text).toContain('Части=СтрРазделить(Пара,":")');
  const literal = assignment
    .filter((token) => token.kind === "string")
    .map((token) => token.text)
    .join("");
  return literal.split(",").map((pair) => {
    const [alphabetic = "", numeric = ""] = pair.split(":");
    return [alphabetic, numeric];
  });
}

/** Each entry checked against ISO 4217 as the currency-codes package (an outside source) has it. */
function currencyTableProblems(pairs: readonly [string, string][]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [alphabetic, numeric] of pairs) {
    if (seen.has(alphabetic)) problems.push(`${alphabetic} is listed twice`);
    seen.add(alphabetic);
    if (!/^\d{3}$/.test(numeric)) problems.push(`${alphabetic}: ${JSON.stringify(numeric)} is not three digits`);
    const iso = isoCurrency(alphabetic);
    if (iso === undefined) problems.push(`${alphabetic} is no ISO 4217 code`);
    else if (iso.number !== numeric) problems.push(`${alphabetic} is ${iso.number} in ISO 4217, not ${numeric}`);
  }
  return problems;
}

describe("setup: an event in another currency than the order's agreement", () => {
  // The order's currency comes from its agreement; the site's prices are numbers in the event's currency, applied as
  // they are: USD on a RUB agreement booked 100 dollars as 100 roubles.
  it("the currency is checked after the terms are filled and the organisation checked, before the site's prices", () => {
    const create = method(orders, "СоздатьЗаказКлиента").body;
    const terms = callIndex(create, "ЗаполнитьУсловияПродажПоСоглашению");
    const conflict = create.findIndex(
      (item) => item.type === "stmt" && firstStringArguments(item.tokens, "ВызватьОтказ").includes("SETTING_CONFLICT"),
    );
    const check = callIndex(create, "ПроверитьВалюту");
    expect(terms).toBeGreaterThan(-1);
    expect(check).toBeGreaterThan(terms);
    expect(check).toBeGreaterThan(conflict);
    expect(check).toBeLessThan(callIndex(create, "ПрименитьЦеныСайта"));
    expect(check).toBeLessThan(callIndex(create, "ПровестиДокумент"));
    // Every order is checked, with the event's own order.currency.
    expect(enclosingConditions(create, check)).toEqual([]);
    const call = create[check];
    expect(call?.type === "stmt" ? compact(call.tokens) : "").toBe(
      'ПроверитьВалюту(Заказ,СтрокаИз(ДанныеЗаказа,"currency"))',
    );
  });

  it("refuses CURRENCY_MISMATCH when the ISO 4217 number differs from the order's currency's Код, SETTING_MISSING when the order has none", () => {
    const check = method(orders, "ПроверитьВалюту").body;
    const tokens = statements(check).flat();
    const text = compact(tokens);
    expect(new Set(firstStringArguments(tokens, "ВызватьОтказ"))).toEqual(
      new Set(["SETTING_MISSING", "CURRENCY_MISMATCH"]),
    );
    const refusals = (code: string) =>
      check.flatMap((item, index) =>
        item.type === "stmt" && firstStringArguments(item.tokens, "ВызватьОтказ").includes(code)
          ? [{ conditions: enclosingConditions(check, index).join(" | "), text: compact(item.tokens) }]
          : [],
      );
    expect(refusals("SETTING_MISSING").map((r) => r.conditions)).toEqual(["НеЗначениеЗаполнено(Заказ.Валюта)"]);
    // The site's code through the table to its number, against Код (the catalog keeps the numeric code there).
    expect(text).toContain("ЧисловойКод=КодыВалютISO4217().Получить(КодСайта)");
    expect(text).toContain("КодЗаказа=СокрЛП(Заказ.Валюта.Код)");
    const mismatches = refusals("CURRENCY_MISMATCH");
    expect(mismatches.map((r) => r.conditions)).toContain("ЧисловойКод<>КодЗаказа");
    // A code outside the table: accepted only if the order's currency is named so, else refused.
    expect(text).toContain("КодСайта=ВРег(СокрЛП(Заказ.Валюта.Наименование))");
    expect(mismatches.map((r) => r.conditions)).toContain("ЧисловойКод=Неопределено");
    // Each refusal names what to do: the setting to point at an agreement in the site's currency.
    for (const refusal of mismatches) expect(refusal.text).toMatch(/ИнтСайт_Соглашение|order\.currency/u);
    expect(mismatches.find((r) => r.conditions === "ЧисловойКод<>КодЗаказа")?.text).toContain(
      "КодСайта,ЧисловойКод,Заказ.Валюта,КодЗаказа,Заказ.Соглашение",
    );
  });

  it("the code table agrees with ISO 4217 as the currency-codes package has it, entry by entry", () => {
    const pairs = currencyTable(orders);
    expect(currencyTableProblems(pairs)).toEqual([]);
    const listed = new Map(pairs);
    // The currencies a shop of the region sells in, and XTS: ISO 4217 reserves 963 for tests, so the contract's
    // case currency-of-no-agreement is refused by every base.
    for (const required of [
      "RUB",
      "USD",
      "EUR",
      "KZT",
      "BYN",
      "UAH",
      "UZS",
      "KGS",
      "AMD",
      "AZN",
      "GEL",
      "MDL",
      "TJS",
      "TMT",
      "CNY",
      "GBP",
      "CHF",
      "JPY",
      "TRY",
      "PLN",
      "CZK",
      "AED",
      "INR",
      "CAD",
      "AUD",
      "SEK",
      "NOK",
      "DKK",
      "HKD",
      "SGD",
      "KRW",
      "ILS",
      "HUF",
      "RON",
      "BGN",
      "RSD",
      "MNT",
      "VND",
      "THB",
      "XTS",
    ]) {
      expect(listed.has(required), required).toBe(true);
    }
    expect(listed.get("RUB")).toBe("643");
    expect(listed.get("XTS")).toBe("963");
    expect(isoCurrency("XTS")?.currency).toMatch(/testing/u);
  });

  it("the table check catches a wrong number, a lost leading zero, a duplicate and a code ISO 4217 does not have", () => {
    expect(
      currencyTableProblems([
        ["USD", "804"],
        ["AUD", "36"],
        ["EUR", "978"],
        ["EUR", "978"],
        ["RUR", "810"],
      ]),
    ).toEqual([
      "USD is 840 in ISO 4217, not 804",
      'AUD: "36" is not three digits',
      "AUD is 036 in ISO 4217, not 36",
      "EUR is listed twice",
      "RUR is no ISO 4217 code",
    ]);
  });
});

describe("re-running a record of contract 1 (<sender>/<id>)", () => {
  it("runs under the current key, so the order made since under <sender>~<id> is found, not made again", () => {
    const rerun = compact(statements(method(orders, "ПовторитьСобытие").body).flat());
    expect(rerun).toContain('"КлючИдемпотентности",ТекущийКлючСобытия(ПринятоеСобытие.ИдентификаторСобытия)');
    const current = compact(statements(method(orders, "ТекущийКлючСобытия").body).flat());
    expect(current).toContain('"~"');
  });
});

describe("a status read while the order is still being created", () => {
  // The gateway asks GET /v1/events/{key} after its POST timed out, and takes the contract's 404 as proof that 1C
  // holds no order (src/delivery/retry-policy.ts). Outside a transaction 1C waits for no managed lock, so a read
  // without one answered 404 while the POST of the same key was still posting.
  it("takes a shared lock on the key in a transaction before it reads, and the POST's lock is exclusive", () => {
    const body = method(orders, "СостояниеСобытия").body;
    const lockMade = callIndex(body, "БлокировкаСобытия");
    const begin = callIndex(body, "НачатьТранзакцию");
    const lock = body.findIndex(
      (item) => item.type === "stmt" && compact(item.tokens) === "Блокировка.Заблокировать()",
    );
    const read = callIndex(body, "ПрочитатьПринятоеСобытие");
    expect(lockMade).toBeGreaterThan(-1);
    expect(compact(statements(body).flat())).toContain(
      "РегистрыСведений.ИнтСайт_ПринятыеСобытия.БлокировкаСобытия(ИдентификаторСобытия,ПрежнийКлюч,Истина)",
    );
    expect(begin).toBeGreaterThan(lockMade);
    expect(lock).toBeGreaterThan(begin);
    expect(read).toBeGreaterThan(lock);

    const register = moduleAt("InformationRegisters/ИнтСайт_ПринятыеСобытия/Ext/ManagerModule.bsl");
    const lockBody = compact(statements(method(register, "БлокировкаСобытия").body).flat());
    expect(lockBody).toContain("ЭлементБлокировки.Режим=РежимБлокировкиДанных.Разделяемый");
    expect(lockBody).toContain("ЭлементБлокировки.Режим=РежимБлокировкиДанных.Исключительный");
    // The POST's call leaves the third parameter at its default: exclusive.
    const post = compact(statements(method(orders, "ОбработатьСобытие").body).flat());
    expect(post).toContain("РегистрыСведений.ИнтСайт_ПринятыеСобытия.БлокировкаСобытия(Ключ,ПрежнийКлюч)");
  });

  it("answers 503 with Retry-After, not 404, when the read fails (the lock wait ran out)", () => {
    const service = moduleAt(SERVICE);
    const body = compact(statements(method(service, "ОтветНаСостояниеСобытия").body).flat());
    expect(body).toContain("ИнтСайт_HTTPОтветы.ОтветВременноНедоступен(5,");
    const read = body.indexOf("ИнтСайт_ОбработкаЗаказов.СостояниеСобытия(ИдентификаторСобытия)");
    expect(read).toBeGreaterThan(-1);
    expect(body.indexOf("ОтветВременноНедоступен")).toBeGreaterThan(read);
  });
});

describe("keys that differ only in letter case (1C compares its register's keys without regard to case)", () => {
  it("a record read under another key's spelling is not this key's: POST refuses 409 before anything else, GET is 404", () => {
    const post = method(orders, "ОбработатьСобытие").body;
    const check = callIndex(post, "ЭтоЗаписьКлюча");
    expect(check).toBeGreaterThan(callIndex(post, "ПрочитатьПринятоеСобытие"));
    expect(check).toBeLessThan(callIndex(post, "РезультатПоОбработанномуСобытию"));
    expect(check).toBeLessThan(callIndex(post, "СоздатьДокументыПоСобытию"));
    const refusal = compact(statements(method(orders, "РезультатПоКлючуДругогоРегистра").body).flat());
    expect(refusal).toContain('РезультатСОшибкой("Конфликт","EVENT_ID_REUSED"');
    const status = method(orders, "СостояниеСобытия").body;
    expect(callIndex(status, "ЭтоЗаписьКлюча")).toBeGreaterThan(callIndex(status, "ПрочитатьПринятоеСобытие"));
    // The language's "=" on strings is case-sensitive: no ВРег/НРег may fold the comparison.
    const same = compact(statements(method(orders, "ЭтоЗаписьКлюча").body).flat());
    expect(same).toContain("Записанный=Ключ");
    expect(same).not.toMatch(/ВРег|НРег/u);
  });
});

describe("the checks themselves", () => {
  it("enclosingConditions sees only the branch that holds the statement", () => {
    const lexed = lexBsl(
      [
        "Функция Ф(А)",
        '\tЕсли А = 1 Тогда Б = 1; ИначеЕсли А = 2 Тогда Б = 2; Иначе Б = НовыйРезультат("Х"); КонецЕсли;',
        '\tЕсли А = 3 Тогда Возврат НовыйРезультат("Y"); КонецЕсли;',
        "КонецФункции",
      ].join("\r\n"),
    );
    const [f] = moduleStructure(lexed).methods;
    if (f === undefined) throw new Error("fixture");
    const [x] = producers(f.body, "Х");
    const [y] = producers(f.body, "Y");
    expect(enclosingConditions(f.body, x ?? -1)).toEqual([]);
    expect(enclosingConditions(f.body, y ?? -1)).toEqual(["А=3"]);
  });
});
