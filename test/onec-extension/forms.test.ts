import { describe, expect, it } from "vitest";
import { callsIn, lexBsl, moduleStructure } from "./bsl-lite.ts";
import { checkQuery } from "./bsl-parser/query.ts";
import { propertyOrderProblems } from "./dump-rules.ts";
import { extensionFiles, metadataObject, parseExtensionXml } from "./extension-tree.ts";
import {
  catalogSettingProblems,
  constantFieldProblems,
  defaultListFormProblems,
  type FormModule,
  formProblems,
} from "./forms.ts";
import { child, childrenNamed, parseXml, path, walk, type XmlElement } from "./xml-lite.ts";

/**
 * The support forms of the extension: the list form of the register ИнтСайт_ПринятыеСобытия (filters by
 * status and date, «Открыть заказ», «Повторить») and the settings form ИнтСайт_НастройкиИнтеграции.
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
  const queryText = (root: XmlElement): string =>
    path(
      childrenNamed(child(root, "Attributes") ?? root, "Attribute").find(
        (attribute) => attribute.attributes.get("name") === "Список",
      ),
      "Settings",
      "QueryText",
    )?.text ?? "";

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

  it("has the commands «Открыть заказ» and «Повторить»; the tooltip of Повторить says 1C only resets the event", () => {
    expect(commandTitle(form(), "ОткрытьЗаказ")).toBe("Открыть заказ");
    expect(commandTitle(form(), "Повторить")).toBe("Повторить");
    const command = childrenNamed(child(form(), "Commands") ?? form(), "Command").find(
      (candidate) => candidate.attributes.get("name") === "Повторить",
    );
    const tooltip = path(command, "ToolTip", "v8:item", "v8:content")?.text ?? "";
    expect(tooltip).toContain("REJECTED");
    expect(tooltip).toContain("gateway replay");
    expect(tooltip).toContain("не хранит тело");
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

  it("uses the status values of the order module (SUCCEEDED, REJECTED)", () => {
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
  });

  it("opens the order through a navigation link and resets a rejection through the order module", () => {
    const module = moduleOf(`${LIST_FORM}/Ext/Form/Module.bsl`);
    const calls = callsIn(module.lexed.tokens).map((call) =>
      call.qualifier === "" ? call.name : `${call.qualifier}.${call.name}`,
    );
    expect(calls).toContain("ИнтСайт_ОбработкаЗаказов.ЗаказПоИдентификатору");
    expect(calls).toContain("ПолучитьНавигационнуюСсылку");
    expect(calls).toContain("ПерейтиПоНавигационнойСсылке");
    expect(calls).toContain("ИнтСайт_ОбработкаЗаказов.СброситьОтказ");
  });
});

describe("forms: the settings form ИнтСайт_НастройкиИнтеграции", () => {
  const form = (): XmlElement => xmlOf(`${SETTINGS_FORM}/Ext/Form.xml`);
  const constants = (): string[] =>
    configurationObjects()
      .filter((entry) => entry.startsWith("Constant."))
      .map((entry) => entry.slice("Constant.".length));

  it("edits every constant of the extension", () => {
    expect(constants()).toHaveLength(9);
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

  it("narrows every «any catalog» constant to its catalog (СправочникиНастроек of the adaptation code)", () => {
    const orders = moduleOf("CommonModules/ИнтСайт_ОбработкаЗаказов/Ext/Module.bsl");
    const method = orders.structure.methods.find((candidate) => candidate.name === "СправочникиНастроек");
    const strings = (method?.body ?? [])
      .flatMap((item) => (item.type === "stmt" ? item.tokens : []))
      .filter((token) => token.kind === "string");
    const known = (strings[0]?.text ?? "").split(",").map((name) => name.trim());
    expect(known).toHaveLength(4);
    const described = constants().map((name) => ({
      name,
      anyCatalog:
        path(metadataObject(xmlOf(`Constants/${name}.xml`)), "Properties", "Type", "v8:TypeSet")?.text ===
        "cfg:CatalogRef",
    }));
    expect(catalogSettingProblems(described, known, "ИнтСайт_")).toEqual([]);
    const settings = files.find((file) => file.rel === `${SETTINGS_FORM}/Ext/Form/Module.bsl`)?.text ?? "";
    expect(settings).toContain("ИнтСайт_ОбработкаЗаказов.ТипыНастроекСсылок()");
    expect(settings).toContain(".ОграничениеТипа = ");
  });

  it("fails on an «any catalog» constant the adaptation code has no catalog for, and the reverse", () => {
    const described = [
      { name: "ИнтСайт_Склад", anyCatalog: true },
      { name: "ИнтСайт_Касса", anyCatalog: true },
      { name: "ИнтСайт_Организация", anyCatalog: false },
    ];
    expect(catalogSettingProblems(described, ["Склад", "Организация"], "ИнтСайт_")).toEqual([
      "ИнтСайт_Касса: «any catalog» constant without a catalog in СправочникиНастроек",
      "ИнтСайт_Организация: named in СправочникиНастроек, but not a catalog reference",
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
