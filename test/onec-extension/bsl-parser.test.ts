import { describe, expect, it } from "vitest";
import { lexBsl, moduleStructure } from "./bsl-lite.ts";
import { parseBsl } from "./bsl-parser/parser.ts";
import { checkQuery } from "./bsl-parser/query.ts";
import { extensionFiles } from "./extension-tree.ts";

/**
 * Every module of 1c/extension parsed with our BSL parser (bsl-parser/), and the parser fed
 * broken modules so it can be seen to fail at the right line: a missing ";", a missing КонецЕсли,
 * a dangling ".", an unterminated string, broken queries, and more.
 */

const modules = extensionFiles().filter((file) => file.rel.endsWith(".bsl"));

function bsl(...lines: string[]): string {
  return lines.join("\r\n");
}

/** "line: message" of the first problem, or "ok". */
function verdict(source: string): string {
  const result = parseBsl(source);
  return result.ok ? "ok" : `${result.problem.line}: ${result.problem.message}`;
}

describe("BSL parser: the modules of 1c/extension", () => {
  it("parses every module, reporting file:line on failure", () => {
    expect(modules.length).toBeGreaterThanOrEqual(4);
    const problems = modules.flatMap((file) => {
      const result = parseBsl(file.text);
      return result.ok ? [] : [`${file.rel}:${result.problem.line}: ${result.problem.message}`];
    });
    expect(problems).toEqual([]);
  });

  it("finds the same methods as the structural scanner, and parses the query texts", () => {
    let queries = 0;
    for (const file of modules) {
      const result = parseBsl(file.text);
      if (!result.ok) continue; // reported above
      queries += result.module.queries;
      const scanned = moduleStructure(lexBsl(file.text)).methods.map((method) => `${method.kind}:${method.name}`);
      expect(
        result.module.methods.map((method) => `${method.kind}:${method.name}`),
        file.rel,
      ).toEqual(scanned);
    }
    expect(queries, "the order module and the register hold query texts").toBeGreaterThanOrEqual(4);
  });

  it("fails on a real module once a ';' is taken out, at that line", () => {
    const file = modules.find((candidate) => candidate.rel.includes("ИнтСайт_ОбработкаЗаказов"));
    if (file === undefined) throw new Error("no order module");
    const lines = file.text.split("\r\n");
    const index = lines.findIndex((line) => line.trim() === "Хеширование.Добавить(Тело);");
    expect(index).toBeGreaterThan(0);
    lines[index] = lines[index]?.replace(/;$/, "") ?? "";
    expect(verdict(lines.join("\r\n"))).toMatch(new RegExp(`^${index + 1}: ";" expected after the statement`));
  });

  it("fails on a real module once a КонецЕсли is taken out, naming the Если left open", () => {
    const file = modules.find((candidate) => candidate.rel.includes("ИнтСайт_ОбработкаЗаказов"));
    if (file === undefined) throw new Error("no order module");
    const lines = file.text.split("\r\n");
    const index = lines.findIndex((line) => line.trim() === "КонецЕсли;");
    const opener = lines.slice(0, index).findLastIndex((line) => /^\s*Если /.test(line));
    lines.splice(index, 1);
    expect(verdict(lines.join("\r\n"))).toMatch(new RegExp(`Если on line ${opener + 1} is still open`));
  });
});

describe("BSL parser: broken modules", () => {
  it("accepts a module using the whole grammar it knows", () => {
    expect(
      verdict(
        bsl(
          "#Область ПрограммныйИнтерфейс",
          "Перем Кэш;",
          "&НаСервере",
          'Функция Ф(Знач А, Б = 1, В = "x", Г = Неопределено, Д = -2) Экспорт',
          "\tПерем Локальная;",
          "\tЕсли А = 1 И НЕ Б <> 2 ИЛИ (В >= 3) Тогда",
          "\t\tЛокальная = ?(А > 0, А * 2 % 3, -А);",
          "\tИначеЕсли Б Тогда",
          "\t\tДля Каждого Элемент Из Новый Массив Цикл Продолжить; КонецЦикла;",
          "\tИначе",
          "\t\tДля Индекс = 0 По 10 Цикл Прервать КонецЦикла",
          "\tКонецЕсли;",
          "\tПока Ложь Цикл КонецЦикла;",
          "\tПопытка",
          "\t\tЗаписьЖурналаРегистрации(А, , , Б);",
          "\t\tОбъект.Цикл = Массив[0].Свойство(1)[2];",
          '\t\tДата = \'20260101\'; Текст = "a""b"',
          '\t\t\t+ "c";',
          '\t\tЗапрос = Новый Запрос("ВЫБРАТЬ ПЕРВЫЕ 1',
          "\t\t|\tТ.Ссылка КАК Ссылка",
          "\t\t// комментарий внутри строки",
          "\t\t|ИЗ Справочник.Т КАК Т ГДЕ Т.Код В (&Коды) И НЕ Т.ПометкаУдаления",
          '\t\t|УПОРЯДОЧИТЬ ПО Т.Код УБЫВ");',
          "\tИсключение",
          "\t\tВызватьИсключение;",
          "\tКонецПопытки;",
          '\tВозврат (Новый Структура("А", 1)).А;',
          "КонецФункции",
          "#КонецОбласти",
        ),
      ),
    ).toBe("ok");
  });

  it.each([
    [
      "a missing ';' between two statements",
      bsl("Процедура П()", "\tА = 1", "\tБ = 2;", "КонецПроцедуры"),
      /^2: ";" expected after the statement, got "Б"/,
    ],
    [
      "a missing КонецЕсли",
      bsl("Процедура П()", "\tЕсли А Тогда", "\t\tБ = 1;", "КонецПроцедуры"),
      /^4: "КонецПроцедуры" here, but Если on line 2 is still open: ИначеЕсли or Иначе or КонецЕсли expected/,
    ],
    [
      "a dangling '.'",
      bsl("Процедура П()", "\tА = Объект.;", "КонецПроцедуры"),
      /^2: a name expected after "\.", got ";"/,
    ],
    [
      "a dangling '.' at the end of a line",
      bsl("Процедура П()", "\tОбъект.Записать().", "КонецПроцедуры"),
      /^2: a name expected after "\.", got "КонецПроцедуры"/,
    ],
    [
      "an unterminated string",
      bsl("Процедура П()", '\tА = "начало', "\tБ = 1;", "КонецПроцедуры"),
      /^2: unterminated string literal/,
    ],
    [
      "a broken query: КАК without an alias",
      bsl(
        "Процедура П()",
        "\tЗапрос.Текст =",
        '\t"ВЫБРАТЬ',
        "\t|\tТ.Ссылка КАК",
        '\t|ИЗ Справочник.Т КАК Т";',
        "КонецПроцедуры",
      ),
      /^5: query: an alias after КАК expected, got "ИЗ"/,
    ],
    [
      "a broken query: no ИЗ before the table",
      bsl("Процедура П()", '\tЗапрос.Текст = "ВЫБРАТЬ Т.Ссылка Справочник.Т";', "КонецПроцедуры"),
      /^2: query: unexpected "Справочник" after the query/,
    ],
    [
      "a broken query: an unclosed parenthesis",
      bsl(
        "Процедура П()",
        '\tЗапрос.Текст = "ВЫБРАТЬ Т.Ссылка ИЗ Справочник.Т КАК Т',
        '\t|ГДЕ Т.Код В (&Коды";',
        "КонецПроцедуры",
      ),
      /^3: query: "\)" expected, got the end of the query/,
    ],
    [
      "a broken query: ГДЕ without a condition",
      bsl("Процедура П()", '\tЗапрос.Текст = "ВЫБРАТЬ Т.Ссылка ИЗ Справочник.Т КАК Т ГДЕ";', "КонецПроцедуры"),
      /^2: query: an expression expected, got the end of the query/,
    ],
    [
      "КонецПроцедуры closing a Функция",
      bsl("Функция Ф()", "\tВозврат 1;", "КонецПроцедуры"),
      /^3: "КонецПроцедуры" here, but Ф \(line 1\) is still open: КонецФункции expected/,
    ],
    [
      "a module that ends inside a method",
      bsl("Функция Ф()", "\tВозврат 1;"),
      /^2: the module ends inside Ф \(line 1\): КонецФункции expected/,
    ],
    [
      "a method inside a method",
      bsl("Процедура А()", "\tБ = 1;", "Процедура В()", "КонецПроцедуры"),
      /^3: "Процедура" inside А \(line 1\): КонецПроцедуры expected before it/,
    ],
    [
      "Тогда left out",
      bsl("Процедура П()", "\tЕсли А", "\t\tБ = 1;", "\tКонецЕсли;", "КонецПроцедуры"),
      /^3: Тогда after the Если condition expected, got "Б"/,
    ],
    [
      "Возврат with a value in a Процедура",
      bsl("Процедура П()", "\tВозврат 1;", "КонецПроцедуры"),
      /^2: Возврат with a value inside a Процедура/,
    ],
    [
      "a statement that is neither an assignment nor a call",
      bsl("Процедура П()", "\tОбъект.Свойство;", "КонецПроцедуры"),
      /^2: a statement must be an assignment or a call/,
    ],
    [
      "an unclosed call",
      bsl("Процедура П()", "\tФ(1, 2;", "КонецПроцедуры"),
      /^2: "," or "\)" expected in the arguments opened on line 2, got ";"/,
    ],
    [
      "#Область never closed",
      bsl("#Область Интерфейс", "Процедура П()", "КонецПроцедуры"),
      /^1: #Область is never closed/,
    ],
    [
      "#КонецОбласти closing an #Если",
      bsl("#Если Сервер Тогда", "#КонецОбласти"),
      /^2: #КонецОбласти closes the if opened on line 1/,
    ],
    ["an unterminated date", bsl("Процедура П()", "\tА = '2026;", "КонецПроцедуры"), /^2: unterminated date literal/],
    ["a stray character", bsl("Процедура П()", "\tА = 1 $ 2;", "КонецПроцедуры"), /^2: unexpected character "\$"/],
  ])("fails on %s", (_name, source, expected) => {
    expect(verdict(source)).toMatch(expected);
  });
});

describe("query parser", () => {
  it("accepts joins, grouping, batches, ВЫБОР, МЕЖДУ, ПОДОБНО, ЕСТЬ NULL and virtual tables", () => {
    const text = [
      "ВЫБРАТЬ РАЗЛИЧНЫЕ ПЕРВЫЕ 10",
      "\tТ.Ссылка КАК Ссылка,",
      "\tВЫБОР КОГДА Т.Сумма МЕЖДУ 1 И 10 ТОГДА 1 ИНАЧЕ 0 КОНЕЦ КАК Малая,",
      "\tКОЛИЧЕСТВО(РАЗЛИЧНЫЕ Д.Ссылка) КАК Количество",
      "ПОМЕСТИТЬ ВТ",
      "ИЗ Справочник.Т КАК Т",
      "\tЛЕВОЕ СОЕДИНЕНИЕ Документ.Д КАК Д ПО Д.Т = Т.Ссылка",
      "\tВНУТРЕННЕЕ СОЕДИНЕНИЕ РегистрСведений.Р.СрезПоследних(&Дата, ) КАК Р ПО Р.Т = Т.Ссылка",
      'ГДЕ Т.Имя ПОДОБНО "%а%" И Д.Ссылка ЕСТЬ НЕ NULL И Т.Вид = ЗНАЧЕНИЕ(Перечисление.Виды.Товар)',
      "СГРУППИРОВАТЬ ПО Т.Ссылка",
      "ИМЕЮЩИЕ КОЛИЧЕСТВО(*) > 1",
      ";",
      "ВЫБРАТЬ ВТ.Ссылка ИЗ ВТ КАК ВТ ОБЪЕДИНИТЬ ВСЕ ВЫБРАТЬ НЕОПРЕДЕЛЕНО УПОРЯДОЧИТЬ ПО Ссылка",
    ].join("\n");
    expect(checkQuery(text)).toBeUndefined();
  });

  it.each([
    ["ВЫБРАТЬ ИЗ Справочник.Т КАК Т", 0, /an expression expected, got "ИЗ"/],
    ["ВЫБРАТЬ Т.Ссылка\nИЗ Справочник.Т КАК", 1, /an alias after КАК expected, got the end of the query/],
    ["ВЫБРАТЬ Т.Ссылка ИЗ Справочник.Т КАК Т\nГДЕ Т.Код НЕ 1", 1, /В, ПОДОБНО or МЕЖДУ expected after НЕ/],
    ["ВЫБРАТЬ Т.Ссылка ИЗ Справочник.Т КАК Т\nЛЕВОЕ СОЕДИНЕНИЕ Документ.Д КАК Д", 1, /ПО expected/],
    ["ВЫБРАТЬ Т.\nИЗ Т", 1, /a name expected after "\."/],
    ['ВЫБРАТЬ "открыто ИЗ Т', 0, /unterminated string in the query/],
  ])("fails on %j at line %i of the text", (text, lineIndex, message) => {
    const problem = checkQuery(text);
    expect(problem?.lineIndex).toBe(lineIndex);
    expect(problem?.message).toMatch(message);
  });
});
