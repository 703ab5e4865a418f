import { describe, expect, it } from "vitest";
import {
  callsIn,
  checkBlocks,
  checkDocComments,
  checkRegions,
  checkTransactionShape,
  lexBsl,
  type MethodInfo,
  moduleStructure,
  type Problem,
} from "./bsl-lite.ts";
import { collectUuids, compareWithSnapshot, type UuidEntry } from "./extension-tree.ts";
import { parseXml } from "./xml-lite.ts";

/** The checkers themselves, fed small good and broken inputs: each check must be able to fail. */

/** Module text with CRLF line ends, as Designer writes it. */
function bsl(...lines: string[]): string {
  return lines.join("\r\n");
}

function blocks(source: string): Problem[] {
  return checkBlocks(lexBsl(source));
}

function methods(source: string): MethodInfo[] {
  return moduleStructure(lexBsl(source)).methods;
}

function transactionProblems(source: string): Problem[] {
  return methods(source).flatMap((method) => checkTransactionShape(method.body));
}

const GOOD_TRANSACTION = bsl(
  "Процедура Записать(Ключ)",
  "\tБлокировка = Новый БлокировкаДанных;",
  "\tНачатьТранзакцию();",
  "\tПопытка",
  "\t\tБлокировка.Заблокировать();",
  '\t\tЕсли Ключ = "" Тогда',
  '\t\t\tВызватьИсключение "пустой ключ";',
  "\t\tКонецЕсли;",
  "\t\tЗафиксироватьТранзакцию();",
  "\tИсключение",
  "\t\tОтменитьТранзакцию();",
  "\t\tВызватьИсключение;",
  "\tКонецПопытки;",
  "КонецПроцедуры",
);

describe("lexBsl", () => {
  it("keeps keywords inside strings, multi-line strings and comments out of the token stream", () => {
    const lexed = lexBsl(
      bsl(
        "// Если Попытка Цикл",
        'Текст = "Если ""Попытка"" Цикл',
        "\t|КонецЕсли",
        "\t// комментарий посреди строки: КонецПопытки",
        '\t|Функция";',
      ),
    );
    expect(lexed.problems).toEqual([]);
    expect(lexed.tokens.filter((token) => token.keyword !== undefined)).toEqual([]);
    const text = lexed.tokens.find((token) => token.kind === "string");
    expect(text?.text).toBe('Если "Попытка" Цикл\nКонецЕсли\nФункция');
    expect(lexed.commentLines.get(1)).toBe(" Если Попытка Цикл");
  });

  it("treats a keyword after a dot as a member name", () => {
    const [, , member] = lexBsl("Объект.Цикл = 1;").tokens;
    expect(member?.text).toBe("Цикл");
    expect(member?.keyword).toBeUndefined();
  });

  it("reports a string that is not continued with |", () => {
    const lexed = lexBsl(bsl("Процедура П()", '\tТекст = "начало', '\tпродолжение без черты";', "КонецПроцедуры"));
    // The stray quote on line 3 then opens another string: the first problem is the one that matters.
    expect(lexed.problems[0]).toEqual({ line: 2, message: expect.stringContaining("unterminated string literal") });
  });
});

describe("checkBlocks", () => {
  it("accepts balanced code, Russian and English keywords, and preprocessor blocks", () => {
    const source = bsl(
      "#Если Сервер Тогда",
      "#Область ПрограммныйИнтерфейс",
      "Функция Сумма(Массив) Экспорт",
      "\tИтог = 0;",
      "\tДля Каждого Элемент Из Массив Цикл",
      "\t\tЕсли Элемент > 0 Тогда Итог = Итог + Элемент; ИначеЕсли Элемент = 0 Тогда Продолжить; Иначе Прервать; КонецЕсли;",
      "\tКонецЦикла;",
      "\tПока Итог > 100 Цикл Итог = Итог - 1; КонецЦикла;",
      "\tTry Итог = Итог / 1; Except Итог = 0; EndTry;",
      "\tВозврат Итог;",
      "КонецФункции",
      "#КонецОбласти",
      "#КонецЕсли",
    );
    expect(blocks(source)).toEqual([]);
  });

  it("reports an Если that is never closed, on the line of the Если", () => {
    const source = bsl("Процедура П()", "\tЕсли Истина Тогда", "\t\tА = 1;", "КонецПроцедуры");
    expect(blocks(source)).toEqual([
      { line: 4, message: expect.stringContaining("КонецПроцедуры closes Если of line 2") },
    ]);
  });

  it("reports a closer without an opener and an opener without a closer", () => {
    expect(blocks(bsl("Процедура П()", "\tКонецЦикла;", "КонецПроцедуры"))).toEqual([
      { line: 2, message: expect.stringContaining("closes Процедура of line 1") },
    ]);
    expect(blocks(bsl("Функция Ф()", "\tВозврат 1;"))).toEqual([{ line: 1, message: "Функция is never closed" }]);
  });

  it("reports a Попытка without Исключение and a method nested in a method", () => {
    expect(blocks(bsl("Процедура П()", "\tПопытка", "\t\tА = 1;", "\tКонецПопытки;", "КонецПроцедуры"))).toEqual([
      { line: 4, message: "Попытка of line 2 has no Исключение" },
    ]);
    expect(blocks(bsl("Процедура П()", "Процедура Вложенная()", "КонецПроцедуры", "КонецПроцедуры"))).toContainEqual({
      line: 2,
      message: expect.stringContaining("starts before Процедура of line 1 is closed"),
    });
  });

  it("reports unbalanced #Область and #Если", () => {
    expect(blocks(bsl("#Область Один", "#Область Два", "#КонецОбласти"))).toEqual([
      { line: 1, message: "#Область Один is never closed" },
    ]);
    expect(blocks(bsl("#КонецОбласти"))).toEqual([{ line: 1, message: "#КонецОбласти without a matching #Область" }]);
    expect(blocks(bsl("#Если Сервер Тогда", "#КонецОбласти", "#КонецЕсли"))).toContainEqual({
      line: 2,
      message: "#КонецОбласти without a matching #Область",
    });
  });

  it("is not fooled by block keywords inside a string", () => {
    expect(blocks(bsl("Процедура П()", '\tТекст = "КонецПроцедуры";', "КонецПроцедуры"))).toEqual([]);
    expect(blocks(bsl("Процедура П()", '\tТекст = "Если";', "\tЕсли А Тогда", "КонецПроцедуры"))).toHaveLength(1);
  });
});

describe("checkTransactionShape", () => {
  it("accepts the ITS #783 pattern", () => {
    expect(transactionProblems(GOOD_TRANSACTION)).toEqual([]);
  });

  it("reports a statement between НачатьТранзакцию() and Попытка", () => {
    const source = GOOD_TRANSACTION.replace("\tНачатьТранзакцию();", "\tНачатьТранзакцию();\r\n\tА = 1;");
    expect(transactionProblems(source)).toEqual(
      [
        { line: 3, message: expect.stringContaining("must be followed immediately by Попытка") },
        { line: 10, message: expect.stringContaining("ЗафиксироватьТранзакцию() outside the pattern") },
        { line: 12, message: expect.stringContaining("ОтменитьТранзакцию() must be the first statement") },
        { line: 6, message: expect.stringContaining("Заблокировать() must be called inside the Попытка") },
      ].sort((a, b) => a.line - b.line),
    );
  });

  it("reports a commit that is not the last statement of the Попытка", () => {
    const source = bsl(
      "Процедура П()",
      "\tНачатьТранзакцию();",
      "\tПопытка",
      "\t\tЗафиксироватьТранзакцию();",
      "\t\tЗаписатьЕщё();",
      "\tИсключение",
      "\t\tОтменитьТранзакцию();",
      "\t\tВызватьИсключение;",
      "\tКонецПопытки;",
      "КонецПроцедуры",
    );
    expect(transactionProblems(source)).toEqual([
      { line: 4, message: expect.stringContaining("ЗафиксироватьТранзакцию() outside the pattern") },
      { line: 5, message: expect.stringContaining("the last statement before Исключение (line 6)") },
    ]);
  });

  it("reports a commit inside an Если at the end of the Попытка", () => {
    const source = GOOD_TRANSACTION.replace(
      "\t\tЗафиксироватьТранзакцию();",
      "\t\tЕсли Истина Тогда\r\n\t\t\tЗафиксироватьТранзакцию();\r\n\t\tКонецЕсли;",
    );
    expect(transactionProblems(source).map((problem) => problem.line)).toEqual([10, 11]);
  });

  it("reports a rollback that is not the first statement of Исключение", () => {
    const source = GOOD_TRANSACTION.replace(
      "\t\tОтменитьТранзакцию();",
      "\t\tЗаписатьВЖурнал();\r\n\t\tОтменитьТранзакцию();",
    );
    expect(transactionProblems(source)).toEqual([
      { line: 11, message: expect.stringContaining("the first statement after Исключение (line 10)") },
      { line: 12, message: expect.stringContaining("ОтменитьТранзакцию() must be the first statement") },
    ]);
  });

  it("reports an empty Исключение, even with a comment in it", () => {
    const source = bsl(
      "Процедура П()",
      "\tПопытка",
      "\t\tА = 1;",
      "\tИсключение",
      "\t\t// молча",
      "\tКонецПопытки;",
      "КонецПроцедуры",
    );
    expect(transactionProblems(source)).toEqual([
      { line: 4, message: expect.stringContaining("empty Исключение block") },
    ]);
  });

  it("reports a lock taken before the transaction and a commit in a method without НачатьТранзакцию", () => {
    const lockOutside = GOOD_TRANSACTION.replace("\t\tБлокировка.Заблокировать();\r\n", "").replace(
      "\tНачатьТранзакцию();",
      "\tБлокировка.Заблокировать();\r\n\tНачатьТранзакцию();",
    );
    expect(transactionProblems(lockOutside)).toEqual([
      { line: 3, message: expect.stringContaining("Заблокировать() must be called inside the Попытка") },
    ]);
    const split = bsl(
      "Процедура Начать()",
      "\tНачатьТранзакцию();",
      "КонецПроцедуры",
      "Процедура Закончить()",
      "\tЗафиксироватьТранзакцию();",
      "КонецПроцедуры",
    );
    expect(transactionProblems(split).map((problem) => problem.line)).toEqual([2, 5]);
  });
});

describe("checkDocComments", () => {
  const check = (source: string): Problem[] => {
    const lexed = lexBsl(source);
    return checkDocComments(lexed, moduleStructure(lexed).methods);
  };

  it("accepts a full comment above an exported function, annotations in between, and ignores private methods", () => {
    const source = bsl(
      "// Складывает.",
      "//",
      "// Параметры:",
      "//   А - Число - слагаемое.",
      "//",
      "// Возвращаемое значение:",
      "//   Число - сумма.",
      "&НаСервере",
      "Функция Сумма(А) Экспорт",
      "\tВозврат А;",
      "КонецФункции",
      "",
      "Процедура Служебная()",
      "КонецПроцедуры",
    );
    expect(check(source)).toEqual([]);
  });

  it("reports an exported method without a comment, or separated from it by a blank line", () => {
    expect(check(bsl("Процедура Публичная() Экспорт", "КонецПроцедуры"))).toEqual([
      { line: 1, message: expect.stringContaining("Публичная has no doc comment") },
    ]);
    expect(check(bsl("// Описание.", "", "Процедура Публичная() Экспорт", "КонецПроцедуры"))).toHaveLength(1);
  });

  it("reports missing Параметры and Возвращаемое значение sections", () => {
    const problems = check(bsl("// Делает что-то.", "Функция Ф(А) Экспорт", "\tВозврат А;", "КонецФункции"));
    expect(problems.map((problem) => problem.message)).toEqual([
      expect.stringContaining('no "Параметры:" section'),
      expect.stringContaining('no "Возвращаемое значение:" section'),
    ]);
  });
});

describe("checkRegions", () => {
  const rules = {
    topLevel: ["ПрограммныйИнтерфейс", "СлужебныеПроцедурыИФункции"],
    exportRegions: ["ПрограммныйИнтерфейс"],
  };

  it("reports methods outside regions, unknown top-level regions and exports outside the interface", () => {
    const source = bsl(
      "Процедура Снаружи()",
      "КонецПроцедуры",
      "#Область Прочее",
      "#КонецОбласти",
      "#Область СлужебныеПроцедурыИФункции",
      "Процедура Публичная() Экспорт",
      "КонецПроцедуры",
      "#КонецОбласти",
      "#Область ПрограммныйИнтерфейс",
      "Процедура Служебная()",
      "КонецПроцедуры",
      "#КонецОбласти",
    );
    const problems = checkRegions(moduleStructure(lexBsl(source)), rules);
    expect(problems.map((problem) => problem.line).sort((a, b) => a - b)).toEqual([1, 3, 6, 10]);
  });

  it("accepts nested regions inside a standard one", () => {
    const source = bsl(
      "#Область СлужебныеПроцедурыИФункции",
      "#Область АдаптацияПодКонфигурацию",
      "Процедура П()",
      "КонецПроцедуры",
      "#КонецОбласти",
      "#КонецОбласти",
    );
    const structure = moduleStructure(lexBsl(source));
    expect(checkRegions(structure, rules)).toEqual([]);
    expect(structure.methods[0]?.regions).toEqual(["СлужебныеПроцедурыИФункции", "АдаптацияПодКонфигурацию"]);
  });
});

describe("moduleStructure and callsIn", () => {
  it("reads headers: parameters with Знач and defaults, Экспорт, Асинх", () => {
    const [first, second] = methods(
      bsl(
        'Функция Ф(Знач А, Б = 1, В = "x") Экспорт',
        "\tВозврат А;",
        "КонецФункции",
        "Асинх Процедура П()",
        "КонецПроцедуры",
      ),
    );
    expect(first).toMatchObject({ kind: "FUNCTION", name: "Ф", params: ["А", "Б", "В"], exported: true, line: 1 });
    expect(second).toMatchObject({ kind: "PROCEDURE", name: "П", params: [], exported: false, line: 4 });
  });

  it("finds calls, qualified calls, and skips constructors, declarations and calls on results", () => {
    const calls = callsIn(
      lexBsl(
        bsl(
          "Функция Ф()",
          '\tЗапрос = Новый Запрос("ВЫБРАТЬ 1");',
          "\tВыборка = Запрос.Выполнить().Выбрать();",
          '\tЗапись = РегистрыСведений.ИнтСайт_Регистр.НоваяЗапись(СтрДлина("а"));',
          "\tВозврат Локальная() Или (А И Б);",
          "КонецФункции",
        ),
      ).tokens,
    );
    expect(calls.map((call) => `${call.qualifier}|${call.name}|${call.line}`)).toEqual([
      "Запрос|Выполнить|3",
      "РегистрыСведений.ИнтСайт_Регистр|НоваяЗапись|4",
      "|СтрДлина|4",
      "|Локальная|5",
    ]);
  });
});

describe("parseXml", () => {
  it("parses attributes, entities, comments and CDATA", () => {
    const result = parseXml(
      '<?xml version="1.0" encoding="UTF-8"?>\n<!-- c -->\n<a x="1 &amp; 2"><b>&lt;&#1071;&#x44F;</b><c/><![CDATA[<raw>]]></a>\n',
    );
    if (!result.ok) throw new Error(result.problem.message);
    expect(result.root.attributes.get("x")).toBe("1 & 2");
    expect(result.root.children.map((element) => element.name)).toEqual(["b", "c"]);
    expect(result.root.children[0]?.text).toBe("<Яя");
    expect(result.root.text).toBe("<raw>");
  });

  it.each([
    ["<a>\n<b>\n</a>", 3, "</a> closes <b> opened on line 2"],
    ["<a>&nbsp;</a>", 1, "unknown entity &nbsp;"],
    ["<a>fish & chips</a>", 1, '"&" not followed by an entity reference'],
    ["<a/>\n<b/>", 2, "content after the root element"],
    ["<a>\n<b>", 2, "element <b> is never closed"],
    ['<a x="1" x="2"/>', 1, "duplicate attribute x in <a>"],
    ['<a x="<"/>', 1, '"<" in the value of attribute x'],
    ['<?xml version="1.0" encoding="windows-1251"?><a/>', 1, "encoding must be UTF-8"],
  ])("reports %j at line %i", (source, line, message) => {
    expect(parseXml(source)).toEqual({ ok: false, problem: { line, message } });
  });
});

describe("UUID snapshot", () => {
  const root = parseXml(
    [
      '<MetaDataObject version="2.17"><HTTPService uuid="11111111-1111-4111-8111-111111111111">',
      "<Properties><Name>Сервис</Name></Properties><ChildObjects>",
      '<URLTemplate uuid="22222222-2222-4222-8222-222222222222"><Properties><Name>Шаблон</Name></Properties></URLTemplate>',
      "</ChildObjects></HTTPService></MetaDataObject>",
    ].join("\n"),
  );
  if (!root.ok) throw new Error(root.problem.message);
  const entries = collectUuids("HTTPServices/Сервис.xml", root.root);

  it("names every UUID by its object path", () => {
    expect(entries.map((entry) => [entry.key, entry.uuid, entry.line])).toEqual([
      ["HTTPService.Сервис", "11111111-1111-4111-8111-111111111111", 1],
      ["HTTPService.Сервис.URLTemplate.Шаблон", "22222222-2222-4222-8222-222222222222", 3],
    ]);
  });

  it("passes when nothing changed", () => {
    expect(compareWithSnapshot(entries, Object.fromEntries(entries.map((entry) => [entry.key, entry.uuid])))).toEqual(
      [],
    );
  });

  it("fails on a changed UUID, a new object, a removed object and a rename", () => {
    const changed: UuidEntry[] = entries.map((entry) =>
      entry.key.endsWith("Шаблон") ? { ...entry, uuid: "33333333-3333-4333-8333-333333333333" } : entry,
    );
    expect(
      compareWithSnapshot(changed, {
        "HTTPService.Сервис": "11111111-1111-4111-8111-111111111111",
        "HTTPService.Сервис.URLTemplate.Шаблон": "22222222-2222-4222-8222-222222222222",
      }),
    ).toEqual([
      expect.stringMatching(
        /^HTTPServices\/Сервис\.xml:3: UUID of HTTPService\.Сервис\.URLTemplate\.Шаблон changed from 2222.* to 3333/,
      ),
    ]);
    expect(compareWithSnapshot(entries, { "HTTPService.Сервис": "11111111-1111-4111-8111-111111111111" })).toEqual([
      expect.stringContaining("HTTPService.Сервис.URLTemplate.Шаблон has no entry in 1c/uuids.snapshot.json"),
    ]);
    const snapshot = {
      ...Object.fromEntries(entries.map((entry) => [entry.key, entry.uuid])),
      "HTTPService.Сервис.URLTemplate.Удалённый": "44444444-4444-4444-8444-444444444444",
    };
    expect(compareWithSnapshot(entries, snapshot)).toEqual([expect.stringContaining("is no longer in the dump")]);
    const renamed = entries.map((entry) =>
      entry.key.endsWith("Шаблон") ? { ...entry, key: "HTTPService.Сервис.URLTemplate.Новый" } : entry,
    );
    expect(compareWithSnapshot(renamed, Object.fromEntries(entries.map((entry) => [entry.key, entry.uuid])))).toEqual([
      expect.stringContaining("URLTemplate.Новый has no entry"),
      expect.stringContaining("is now HTTPService.Сервис.URLTemplate.Новый (same uuid"),
    ]);
  });
});
