import { describe, expect, it } from "vitest";
import { callsIn, lexBsl, moduleStructure } from "./bsl-lite.ts";
import { checkQuery } from "./bsl-parser/query.ts";
import { propertyOrderProblems } from "./dump-rules.ts";
import { extensionFiles, metadataObject, parseExtensionXml } from "./extension-tree.ts";
import {
  constantFieldProblems,
  defaultListFormProblems,
  directiveOf,
  type FormModule,
  formProblems,
  listFieldProblems,
  listQuery,
  methodCalls,
  reaches,
  registerFields,
  tableColumns,
} from "./forms.ts";
import { child, childrenNamed, parseXml, path, walk, type XmlElement } from "./xml-lite.ts";

/**
 * The support forms of the extension: the list form of the register ИнтСайт_ПринятыеСобытия, the 1C
 * administrator's integration log (filters by status and date, the body, error text and order of the current
 * event, «Открыть заказ», «Повторить» in 1C), and the settings form ИнтСайт_НастройкиИнтеграции.
 * Each check is also fed a broken form, so it can be seen to fail.
 */

const files = extensionFiles();
const rels = new Set(files.map((file) => file.rel));
const REGISTER = "ИнтСайт_ПринятыеСобытия";
const LIST_FORM = `InformationRegisters/${REGISTER}/Forms/ФормаСписка`;
const SETTINGS_FORM = "CommonForms/ИнтСайт_НастройкиИнтеграции";

function xmlOf(rel: string): XmlElement {
  const file = files.find((candidate) => candidate.rel === rel);
  if (file === undefined) throw new Error(`${rel} is missing from 1c/extension`);
  return parseExtensionXml(file);
}

function moduleOf(rel: string): FormModule {
  const file = files.find((candidate) => candidate.rel === rel);
  if (file === undefined) throw new Error(`${rel} is missing from 1c/extension`);
  const lexed = lexBsl(file.text);
  return { lexed, structure: moduleStructure(lexed) };
}

function fixture(text: string): XmlElement {
  const parsed = parseXml(text);
  if (!parsed.ok) throw new Error(`fixture: ${parsed.problem.message}`);
  return parsed.root;
}

function bslFixture(...lines: string[]): FormModule {
  const lexed = lexBsl(lines.join("\r\n"));
  return { lexed, structure: moduleStructure(lexed) };
}

/** Every form of the dump: the folder holding Ext/Form.xml. */
const forms = files
  .filter((file) => file.rel.endsWith("/Ext/Form.xml"))
  .map((file) => file.rel.slice(0, -"/Ext/Form.xml".length));

const configurationObjects = (): string[] =>
  (child(metadataObject(xmlOf("Configuration.xml")), "ChildObjects")?.children ?? []).map(
    (entry) => `${entry.name}.${entry.text.trim()}`,
  );

const commandTitle = (form: XmlElement, name: string): string | undefined =>
  path(
    childrenNamed(child(form, "Commands") ?? form, "Command").find(
      (command) => command.attributes.get("name") === name,
    ),
    "Title",
    "v8:item",
    "v8:content",
  )?.text;

describe("forms: Form.xml against the form module", () => {
  it("the extension has the list form of the register and the settings form, each with its module", () => {
    expect(forms.sort()).toEqual([SETTINGS_FORM, LIST_FORM].sort());
    for (const form of forms) expect(rels.has(`${form}/Ext/Form/Module.bsl`), form).toBe(true);
  });

  it("every event and command handler is in the module with its directive, every command has a button", () => {
    const problems = forms.flatMap((form) =>
      formProblems(xmlOf(`${form}/Ext/Form.xml`), moduleOf(`${form}/Ext/Form/Module.bsl`)).map(
        (problem) => `${form}/Ext/Form.xml:${problem}`,
      ),
    );
    expect(problems).toEqual([]);
  });

  it("fails on a missing handler, a server command handler, a command without a button and a stray DataPath", () => {
    const form = fixture(
      [
        "<Form>",
        '<Events><Event name="OnCreateAtServer">ПриСозданииНаСервере</Event></Events>',
        '<ChildItems><InputField name="Поле"><DataPath>Нет.Поле</DataPath><Events><Event name="OnChange">ПолеПриИзменении</Event></Events></InputField>',
        '<Button name="Кнопка"><CommandName>Form.Command.Открыть</CommandName></Button></ChildItems>',
        '<Attributes><Attribute name="Список"/></Attributes>',
        '<Commands><Command name="Открыть"><Action>Открыть</Action></Command><Command name="Повторить"><Action>Повторить</Action></Command></Commands>',
        "</Form>",
      ].join("\n"),
    );
    const module = bslFixture(
      "#Область ОбработчикиСобытийФормы",
      "&НаКлиенте",
      "Процедура ПриСозданииНаСервере(Отказ, СтандартнаяОбработка)",
      "КонецПроцедуры",
      "#КонецОбласти",
      "#Область ОбработчикиКомандФормы",
      "&НаСервере",
      "Процедура Открыть(Команда)",
      "КонецПроцедуры",
      "&НаКлиенте",
      "Процедура Повторить(Команда)",
      "КонецПроцедуры",
      "#КонецОбласти",
    );
    expect(formProblems(form, module)).toEqual([
      "2: ПриСозданииНаСервере handles OnCreateAtServer: it needs &НаСервере, has НаКлиенте",
      "3: event OnChange handler ПолеПриИзменении is not a method of the form module",
      "6: command handler Открыть needs &НаКлиенте",
      "6: command Повторить has no button on the form",
      "3: DataPath Нет.Поле: no form attribute Нет",
    ]);
  });

  it("the register's form writes its properties in Designer's order, in full", () => {
    const form = metadataObject(xmlOf(`${LIST_FORM}.xml`));
    expect(form?.name).toBe("Form");
    expect(form === undefined ? ["no form"] : propertyOrderProblems(form, true)).toEqual([]);
  });
});

describe("forms: the list form of the register ИнтСайт_ПринятыеСобытия", () => {
  const form = (): XmlElement => xmlOf(`${LIST_FORM}/Ext/Form.xml`);
  const register = (): XmlElement | undefined => metadataObject(xmlOf(`InformationRegisters/${REGISTER}.xml`));
  const queryText = (root: XmlElement): string => listQuery(root, "Список");

  it("is the register's default list form, listed in its child objects, with its files", () => {
    const object = register();
    if (object === undefined) throw new Error("the register file has no object");
    expect(defaultListFormProblems(object, REGISTER, rels)).toEqual([]);
  });

  it("fails when DefaultListForm names a form the register does not have", () => {
    const broken = fixture(
      [
        "<InformationRegister>",
        `<Properties><DefaultListForm>InformationRegister.${REGISTER}.Form.ФормаЗаписи</DefaultListForm></Properties>`,
        "<ChildObjects><Form>ФормаСписка</Form></ChildObjects>",
        "</InformationRegister>",
      ].join("\n"),
    );
    expect(defaultListFormProblems(broken, REGISTER, rels)).toEqual([
      "2: form ФормаЗаписи is not listed in the register's ChildObjects",
      `2: InformationRegisters/${REGISTER}/Forms/ФормаЗаписи.xml is missing`,
      `2: InformationRegisters/${REGISTER}/Forms/ФормаЗаписи/Ext/Form.xml is missing`,
      `2: InformationRegisters/${REGISTER}/Forms/ФормаЗаписи/Ext/Form/Module.bsl is missing`,
    ]);
    const empty = fixture("<InformationRegister><Properties><DefaultListForm/></Properties></InformationRegister>");
    expect(defaultListFormProblems(empty, REGISTER, rels)).toEqual([
      `1: DefaultListForm "" is not a form of ${REGISTER}`,
    ]);
  });

  it("has the commands «Открыть заказ» and «Повторить»; the tooltip of Повторить says 1C re-runs REJECTED and FAILED", () => {
    expect(commandTitle(form(), "ОткрытьЗаказ")).toBe("Открыть заказ");
    expect(commandTitle(form(), "Повторить")).toBe("Повторить");
    const command = childrenNamed(child(form(), "Commands") ?? form(), "Command").find(
      (candidate) => candidate.attributes.get("name") === "Повторить",
    );
    const tooltip = path(command, "ToolTip", "v8:item", "v8:content")?.text ?? "";
    for (const word of ["REJECTED", "FAILED", "SUCCEEDED", "заново в 1С", "сохранённому телу"]) {
      expect(tooltip).toContain(word);
    }
    expect(tooltip).not.toContain("gateway replay");
  });

  it("reads the register with a query that parses, filtered by status and by the date received", () => {
    const text = queryText(form());
    expect(checkQuery(text)).toBeUndefined();
    expect(text).toContain(`РегистрСведений.${REGISTER}`);
    for (const parameter of ["&Статус", "&НачалоПериода", "&КонецПериода"]) expect(text).toContain(parameter);
    expect(text).toMatch(/ДатаПолучения\s*>=\s*&НачалоПериода/u);
    // The module sets every parameter of the query, else the dynamic list would not read.
    const module = files.find((file) => file.rel === `${LIST_FORM}/Ext/Form/Module.bsl`)?.text ?? "";
    for (const parameter of ["Статус", "НачалоПериода", "КонецПериода"]) {
      expect(module).toContain(`УстановитьЗначениеПараметра("${parameter}"`);
    }
    const attributes = childrenNamed(child(form(), "Attributes") ?? form(), "Attribute");
    const type = (name: string): string | undefined =>
      path(
        attributes.find((attribute) => attribute.attributes.get("name") === name),
        "Type",
        "v8:Type",
      )?.text;
    expect(type("ОтборСтатус")).toBe("xs:string");
    expect(type("ОтборПериод")).toBe("v8:StandardPeriod");
    expect(path(attributes[0], "Settings", "MainTable")?.text).toBe(`InformationRegister.${REGISTER}`);
  });

  it("fails on the list query once a condition is broken", () => {
    const broken = queryText(form()).replace("ИЛИ ПринятыеСобытия.Статус", "ИЛИ ИЛИ ПринятыеСобытия.Статус");
    expect(checkQuery(broken)).toMatchObject({ message: expect.stringContaining("expected") });
  });

  it("uses the status values of the order module (SUCCEEDED, REJECTED, FAILED)", () => {
    const returned = (rel: string, name: string): string | undefined => {
      const method = moduleOf(rel).structure.methods.find((candidate) => candidate.name === name);
      const statement = method?.body.find((item) => item.type === "stmt" && item.tokens[0]?.keyword === "RETURN");
      return statement?.type === "stmt" ? statement.tokens[1]?.text : undefined;
    };
    const orders = "CommonModules/ИнтСайт_ОбработкаЗаказов/Ext/Module.bsl";
    const list = `${LIST_FORM}/Ext/Form/Module.bsl`;
    for (const name of ["СтатусОбработано", "СтатусОтклонено"]) {
      expect(returned(list, name), name).toBeDefined();
      expect(returned(list, name), name).toBe(returned(orders, name));
    }
    expect(returned(list, "СтатусОшибка")).toBe("FAILED");
    const ordersStrings = moduleOf(orders).lexed.tokens.filter((token) => token.kind === "string");
    expect(
      ordersStrings.map((token) => token.text),
      "the order module writes FAILED",
    ).toContain("FAILED");
  });

  it("offers every status of the register in the status filter: SUCCEEDED, REJECTED and FAILED", () => {
    const module = moduleOf(`${LIST_FORM}/Ext/Form/Module.bsl`);
    const calls = methodCalls(module, "ПриСозданииНаСервере");
    expect(calls.filter((call) => call === "СписокСтатусов.Добавить")).toHaveLength(4);
    for (const status of ["СтатусОбработано", "СтатусОтклонено", "СтатусОшибка"]) expect(calls).toContain(status);
    const filter = [...walk(form())].find(({ element }) => element.attributes.get("name") === "ОтборСтатус")?.element;
    expect(child(filter, "ListChoiceMode")?.text).toBe("true");
  });

  it("lists each event's time received, key, status, order, error code, time taken and correlation id", () => {
    expect(tableColumns(form(), "Список")).toEqual([
      "ДатаПолучения",
      "ИдентификаторСобытия",
      "Статус",
      "НомерЗаказа",
      "КодОшибки",
      "ДлительностьМс",
      "ИдентификаторКорреляции",
    ]);
  });

  it("the register keeps the body as an unlimited string and the time taken as Number(15,0), neither indexed", () => {
    const object = register();
    const resource = (name: string): XmlElement | undefined =>
      childrenNamed(child(object, "ChildObjects") ?? fixture("<x/>"), "Resource").find(
        (candidate) => path(candidate, "Properties", "Name")?.text === name,
      );
    const body = path(resource("ТелоСобытия"), "Properties");
    expect(path(body, "Type", "v8:Type")?.text).toBe("xs:string");
    expect(path(body, "Type", "v8:StringQualifiers", "v8:Length")?.text).toBe("0");
    expect(child(body, "Indexing")?.text).toBe("DontIndex");
    const duration = path(resource("ДлительностьМс"), "Properties");
    expect(path(duration, "Type", "v8:Type")?.text).toBe("xs:decimal");
    expect(path(duration, "Type", "v8:NumberQualifiers", "v8:Digits")?.text).toBe("15");
    expect(path(duration, "Type", "v8:NumberQualifiers", "v8:FractionDigits")?.text).toBe("0");
    expect(child(duration, "Indexing")?.text).toBe("DontIndex");
  });

  it("every field of the list is a column of its query and a field of the register; the query skips the body", () => {
    const object = register();
    if (object === undefined) throw new Error("the register file has no object");
    const fields = registerFields(object);
    expect(fields.get("ТелоСобытия")?.unlimited).toBe(true);
    expect(listFieldProblems(form(), "Список", fields)).toEqual([]);
    // The module reads these from the current row, which holds only the visible columns (a user may hide one
    // through «Изменить форму») and the fields the list always reads: each must be always read.
    const main = childrenNamed(child(form(), "Attributes") ?? form(), "Attribute")[0];
    const always = childrenNamed(child(main ?? form(), "UseAlways") ?? form(), "Field").map((field) => field.text);
    const module = files.find((file) => file.rel === `${LIST_FORM}/Ext/Form/Module.bsl`)?.text ?? "";
    const read = [...new Set([...module.matchAll(/ТекущиеДанные\.([\p{L}\p{N}_]+)/gu)].map((m) => `Список.${m[1]}`))];
    expect(read.length).toBeGreaterThan(0);
    expect(read.filter((field) => !always.includes(field))).toEqual([]);
  });

  it("fails on a column the query does not select, a field the register lacks and a query reading the body", () => {
    const object = register();
    if (object === undefined) throw new Error("the register file has no object");
    const broken = fixture(
      [
        "<Form>",
        "<ChildItems><Table><ChildItems><LabelField><DataPath>Список.ДлительностьМс</DataPath></LabelField>",
        "<LabelField><DataPath>Список.Нет</DataPath></LabelField></ChildItems></Table></ChildItems>",
        '<Attributes><Attribute name="Список"><UseAlways><Field>Список.ИдентификаторЗаказа</Field></UseAlways>',
        "<Settings><QueryText>ВЫБРАТЬ Р.Нет КАК Нет, Р.ТелоСобытия КАК ТелоСобытия",
        "ИЗ",
        "РегистрСведений.ИнтСайт_ПринятыеСобытия КАК Р</QueryText></Settings></Attribute></Attributes>",
        "</Form>",
      ].join("\n"),
    );
    expect(listFieldProblems(broken, "Список", registerFields(object))).toEqual([
      "2: Список.ДлительностьМс: the list query selects no ДлительностьМс",
      "3: Список.Нет: no field Нет in the register",
      "4: Список.ИдентификаторЗаказа: the list query selects no ИдентификаторЗаказа",
      "1: the list query selects ТелоСобытия, a string of unlimited length",
    ]);
  });

  it("shows the current event's body and full error text read-only under the list, read on the server by key", () => {
    const items = [...walk(form())];
    for (const name of ["ТелоСобытия", "ТекстОшибки"]) {
      const found = items.find(({ element }) => child(element, "DataPath")?.text === name);
      expect(found?.element.name, name).toBe("InputField");
      expect(
        found?.ancestors.some((ancestor) => ancestor.name === "Table"),
        `${name} outside the list`,
      ).toBe(false);
      for (const flag of ["ReadOnly", "MultiLine"])
        expect(child(found?.element, flag)?.text, `${name} ${flag}`).toBe("true");
      const attribute = childrenNamed(child(form(), "Attributes") ?? form(), "Attribute").find(
        (candidate) => candidate.attributes.get("name") === name,
      );
      expect(path(attribute, "Type", "v8:StringQualifiers", "v8:Length")?.text, `${name}: unlimited`).toBe("0");
    }
    // The table's row activation reads the details (through an idle handler) from a server function whose query
    // takes both fields of the register by the event's key.
    const table = items.find(({ element }) => element.name === "Table")?.element;
    const activation = childrenNamed(child(table, "Events") ?? fixture("<x/>"), "Event").find(
      (event) => event.attributes.get("name") === "OnActivateRow",
    );
    const module = moduleOf(`${LIST_FORM}/Ext/Form/Module.bsl`);
    const reader = module.structure.methods.find((method) => method.name === "ПодробностиСобытия");
    if (reader === undefined) throw new Error("no ПодробностиСобытия in the list form module");
    expect(directiveOf(module.lexed, reader)).toBe("НаСервереБезКонтекста");
    expect(reaches(module, activation?.text.trim() ?? "", "ПодробностиСобытия")).toBe(true);
    const query =
      module.lexed.tokens.find(
        (token) => token.kind === "string" && token.line > reader.line && /^\s*ВЫБРАТЬ/u.test(token.text),
      )?.text ?? "";
    expect(checkQuery(query)).toBeUndefined();
    expect(query).toContain(`РегистрСведений.${REGISTER}`);
    expect(query).toMatch(/ИдентификаторСобытия\s*=\s*&ИдентификаторСобытия/u);
    for (const field of ["ТелоСобытия", "ТекстОшибки"])
      expect(query).toMatch(new RegExp(`\\.${field} КАК ${field}`, "u"));
  });

  it("shows the order as a hyperlink that opens it through its navigation link, as «Открыть заказ» does", () => {
    const link = [...walk(form())].find(
      ({ element }) => child(element, "DataPath")?.text === "ПредставлениеЗаказа",
    )?.element;
    expect(link?.name).toBe("LabelField");
    expect(child(link, "Hyperlink")?.text).toBe("true");
    const click = childrenNamed(child(link, "Events") ?? fixture("<x/>"), "Event").find(
      (event) => event.attributes.get("name") === "Click",
    );
    const module = moduleOf(`${LIST_FORM}/Ext/Form/Module.bsl`);
    for (const from of [click?.text.trim() ?? "", "ОткрытьЗаказ"]) {
      expect(reaches(module, from, "ПерейтиПоНавигационнойСсылке"), from).toBe(true);
      expect(reaches(module, from, "ИнтСайт_ОбработкаЗаказов.ЗаказПоИдентификатору"), from).toBe(true);
      expect(reaches(module, from, "ПолучитьНавигационнуюСсылку"), from).toBe(true);
    }
    const server = module.structure.methods.filter((method) =>
      methodCalls(module, method.name).includes("ПолучитьНавигационнуюСсылку"),
    );
    expect(server.map((method) => directiveOf(module.lexed, method))).toEqual(["НаСервереБезКонтекста"]);
  });

  it("«Повторить» asks first, then re-runs the event in 1C through ИнтСайт_ОбработкаЗаказов.ПовторитьСобытие on the server", () => {
    const module = moduleOf(`${LIST_FORM}/Ext/Form/Module.bsl`);
    const target = "ИнтСайт_ОбработкаЗаказов.ПовторитьСобытие";
    const callers = module.structure.methods.filter((method) => methodCalls(module, method.name).includes(target));
    expect(callers.map((method) => directiveOf(module.lexed, method))).toEqual(["НаСервереБезКонтекста"]);
    // Only through the answer to the question: without the notification handler the command reaches nothing.
    expect(methodCalls(module, "Повторить")).toContain("ПоказатьВопрос");
    expect(reaches(module, "Повторить", target)).toBe(true);
    expect(reaches(module, "Повторить", target, false)).toBe(false);
    const answer = module.structure.methods.find((method) => methodCalls(module, "Повторить").includes(method.name));
    const answerCalls = methodCalls(module, answer?.name ?? "");
    const answerText = module.lexed.tokens
      .filter((token) => answer !== undefined && token.line > answer.line)
      .slice(0, 12)
      .map((token) => token.text)
      .join(" ");
    expect(answerText).toContain("КодВозвратаДиалога . Да");
    expect(answerCalls).toContain("Элементы.Список.Обновить");
    expect(answerCalls).toContain("ПоказатьПредупреждение");
    // The rejection reset of version 1.1 is gone: 1C keeps the body and re-runs the event itself.
    expect(module.structure.methods.flatMap((method) => methodCalls(module, method.name))).not.toContain(
      "ИнтСайт_ОбработкаЗаказов.СброситьОтказ",
    );
  });

  it("«Повторить» is for REJECTED and FAILED rows only: a SUCCEEDED row gets a warning and a disabled button", () => {
    const module = moduleOf(`${LIST_FORM}/Ext/Form/Module.bsl`);
    const allowed = methodCalls(module, "МожноПовторить");
    expect(allowed).toContain("СтатусОтклонено");
    expect(allowed).toContain("СтатусОшибка");
    expect(allowed).not.toContain("СтатусОбработано");
    const command = methodCalls(module, "Повторить");
    expect(command.indexOf("МожноПовторить")).toBeGreaterThanOrEqual(0);
    expect(command.indexOf("МожноПовторить")).toBeLessThan(command.indexOf("ПоказатьВопрос"));
    expect(command).toContain("ПоказатьПредупреждение");
    const text = files.find((file) => file.rel === `${LIST_FORM}/Ext/Form/Module.bsl`)?.text ?? "";
    expect(text).toMatch(/Элементы\.ФормаПовторить\.Доступность = МожноПовторить\(/u);
  });
});

describe("forms: the settings form ИнтСайт_НастройкиИнтеграции", () => {
  const form = (): XmlElement => xmlOf(`${SETTINGS_FORM}/Ext/Form.xml`);
  const constants = (): string[] =>
    configurationObjects()
      .filter((entry) => entry.startsWith("Constant."))
      .map((entry) => entry.slice("Constant.".length));

  it("edits every constant of the extension", () => {
    expect(constants()).toHaveLength(12);
    expect(constantFieldProblems(form(), constants())).toEqual([]);
  });

  it("fails when a constant has no field or the main attribute is not the constants set", () => {
    const broken = fixture(
      [
        "<Form>",
        "<ChildItems><InputField><DataPath>НаборКонстант.ИнтСайт_Склад</DataPath></InputField></ChildItems>",
        '<Attributes><Attribute name="Объект"><Type><v8:Type>cfg:ConstantsSet</v8:Type></Type><MainAttribute>true</MainAttribute></Attribute></Attributes>',
        "</Form>",
      ].join("\n"),
    );
    expect(constantFieldProblems(broken, ["ИнтСайт_Склад", "ИнтСайт_Организация"])).toEqual([
      "3: the main attribute must be НаборКонстант of type cfg:ConstantsSet",
      "1: no field edits the constant ИнтСайт_Организация",
    ]);
  });

  it("has a «Записать и закрыть» button whose handler writes, then closes", () => {
    expect(commandTitle(form(), "ЗаписатьИЗакрыть")).toBe("Записать и закрыть");
    const module = moduleOf(`${SETTINGS_FORM}/Ext/Form/Module.bsl`);
    const method = module.structure.methods.find((candidate) => candidate.name === "ЗаписатьИЗакрыть");
    const called = callsIn(module.lexed.tokens)
      .filter((call) => method !== undefined && call.line > method.line)
      .map((call) => call.name);
    expect(called.slice(0, 2)).toEqual(["Записать", "Закрыть"]);
  });

  it("is listed in Configuration.xml and opens from the subsystem's command interface", () => {
    expect(configurationObjects()).toContain("CommonForm.ИнтСайт_НастройкиИнтеграции");
    const object = metadataObject(xmlOf(`${SETTINGS_FORM}.xml`));
    expect(path(object, "Properties", "UseStandardCommands")?.text).toBe("true");
    const subsystem = metadataObject(xmlOf("Subsystems/ИнтСайт_ИнтеграцияССайтом.xml"));
    const content = [...walk(path(subsystem, "Properties", "Content") ?? fixture("<x/>"))].map(({ element }) =>
      element.text.trim(),
    );
    expect(content).toContain("CommonForm.ИнтСайт_НастройкиИнтеграции");
    expect(content).toContain(`InformationRegister.${REGISTER}`);
  });
});
