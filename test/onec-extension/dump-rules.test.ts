import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadContract } from "../../src/onec/contract/cases.ts";
import { KEY_MAX_LENGTH, KEY_PATTERN } from "../../src/onec/contract/key.ts";
import { CONTRACT_VERSION } from "../../src/onec/contract/version.ts";
import { callsIn, lexBsl, moduleStructure, type Token } from "./bsl-lite.ts";
import {
  adoptedCatalogProblems,
  catalogReferenceProblems,
  formatProblems,
  grantedRights,
  operatorRightsProblems,
  propertyOrderProblems,
  referenceTypeProblems,
} from "./dump-rules.ts";
import {
  extensionFiles,
  isAdopted,
  KIND_DIRS,
  metadataObject,
  nameOf,
  ONEC_DIR,
  parseExtensionXml,
  VRD_FILE,
} from "./extension-tree.ts";
import { child, childrenNamed, parseXml, path, walk, type XmlElement } from "./xml-lite.ts";

/**
 * The dump held to facts of real Designer dumps and of the УТ 11.5 order document (onec.md, "Facts
 * checked against real Designer dumps…"): format against the stated minimum platform, adopted
 * objects matched by name, property order per kind, rights on existing objects, the order lines'
 * required columns, one contract version and key alphabet everywhere. Each check is also fed a
 * broken input, so it can be seen to fail.
 */

const files = extensionFiles();
const README = readFileSync(join(ONEC_DIR, "README.md"), "utf8");

function root(rel: string): XmlElement {
  const file = files.find((candidate) => candidate.rel === rel);
  if (file === undefined) throw new Error(`${rel} is missing from 1c/extension`);
  return parseExtensionXml(file);
}

function objectOf(rel: string): XmlElement {
  const object = metadataObject(root(rel));
  if (object === undefined) throw new Error(`${rel}: not a <MetaDataObject>`);
  return object;
}

const configuration = (): XmlElement => objectOf("Configuration.xml");
const listed = (): Array<{ kind: string; name: string; line: number }> =>
  (child(configuration(), "ChildObjects")?.children ?? []).map((entry) => ({
    kind: entry.name,
    name: entry.text.trim(),
    line: entry.line,
  }));
const objectFiles = (): string[] => listed().map((entry) => `${KIND_DIRS[entry.kind]}/${entry.name}.xml`);

function bslTokens(rel: string): Token[] {
  const file = files.find((candidate) => candidate.rel === rel);
  if (file === undefined) throw new Error(`${rel} is missing`);
  return lexBsl(file.text).tokens;
}

/** The value a one-line `Возврат "…";` function returns, from the module's tokens. */
function returnedString(rel: string, functionName: string): string | undefined {
  const file = files.find((candidate) => candidate.rel === rel);
  if (file === undefined) return undefined;
  const method = moduleStructure(lexBsl(file.text)).methods.find((candidate) => candidate.name === functionName);
  const statement = method?.body.find((item) => item.type === "stmt" && item.tokens[0]?.keyword === "RETURN");
  return statement?.type === "stmt" ? statement.tokens[1]?.text : undefined;
}

const ORDERS = "CommonModules/ИнтСайт_ОбработкаЗаказов/Ext/Module.bsl";
const SETTINGS_FORM = "CommonForms/ИнтСайт_НастройкиИнтеграции";
const TECHNICAL_ROLE = "Roles/ИнтСайт_ИнтеграцияССайтом/Ext/Rights.xml";
const OPERATOR_ROLE = "Roles/ИнтСайт_ОператорИнтеграции/Ext/Rights.xml";

/** Catalogs the extension adopts (by name), and the setting each reference constant holds. */
const ADOPTED_CATALOGS = ["Контрагенты", "Номенклатура", "Организации", "Партнеры", "Склады", "СоглашенияСКлиентами"];
const CATALOG_SETTINGS: Readonly<Record<string, string>> = {
  ИнтСайт_Организация: "Организации",
  ИнтСайт_Склад: "Склады",
  ИнтСайт_Соглашение: "СоглашенияСКлиентами",
  ИнтСайт_НоменклатураДоставки: "Номенклатура",
};
/** String settings with a choice list: "" is the default. */
const CHOICE_SETTINGS: Readonly<Record<string, { length: string; source: string }>> = {
  ИнтСайт_РежимПокупателя: { length: "30", source: "РежимыПокупателя" },
  ИнтСайт_ВариантОбеспеченияТоваров: { length: "50", source: "ВариантыОбеспеченияНастроек" },
  ИнтСайт_ВариантОбеспеченияУслуг: { length: "50", source: "ВариантыОбеспеченияНастроек" },
};

/** The Russian synonym of an object. */
const synonymOf = (object: XmlElement): string | undefined =>
  path(object, "Properties", "Synonym", "v8:item", "v8:content")?.text;

/** "Минимальная версия платформы: **8.3.22**" in 1c/README.md. */
function readmePlatform(text: string): string | undefined {
  return /Минимальная версия платформы[^0-9]*(8\.3\.\d+)/u.exec(text)?.[1];
}

describe("format version and platform", () => {
  it("the dump's format is one the README's minimum platform reads, and the README names both", () => {
    const format = root("Configuration.xml").attributes.get("version") ?? "";
    const platform = readmePlatform(README);
    expect(platform, "1c/README.md must say «Минимальная версия платформы: 8.3.x»").toBeDefined();
    expect(formatProblems(format, platform ?? "")).toEqual([]);
    expect(README).toContain(`Формат выгрузки: **${format}**`);
  });

  it("fails for a 2.17 dump on 8.3.20 and passes a 2.13 dump there", () => {
    expect(formatProblems("2.17", "8.3.20")).toEqual([
      "format 2.17 needs a newer platform than 8.3.20, which reads formats up to 2.13",
    ]);
    expect(formatProblems("2.13", "8.3.21")).toEqual([]);
    expect(formatProblems("2.15", "8.3.22")).toEqual([]);
    expect(readmePlatform("Минимальная версия платформы: **8.3.22**")).toBe("8.3.22");
  });
});

describe("adopted objects", () => {
  /** Problems: an adopted object without ExtendedConfigurationObject while matching is by UUID. */
  function adoptionProblems(config: XmlElement, objects: ReadonlyArray<{ rel: string; object: XmlElement }>): string[] {
    const byIds = path(config, "Properties", "KeepMappingToExtendedConfigurationObjectsByIDs")?.text.trim() === "true";
    if (!byIds) return [];
    return objects
      .filter(
        ({ object }) => isAdopted(object) && path(object, "Properties", "ExtendedConfigurationObject") === undefined,
      )
      .map(
        ({ rel, object }) =>
          `${rel}:${object.line}: adopted ${object.name} without ExtendedConfigurationObject while KeepMappingToExtendedConfigurationObjectsByIDs is true`,
      );
  }

  it("are matched by name (the base object's UUID differs between УТ, ERP and КА bases)", () => {
    expect(path(configuration(), "Properties", "KeepMappingToExtendedConfigurationObjectsByIDs")?.text).toBe("false");
    const objects = objectFiles().map((rel) => ({ rel, object: objectOf(rel) }));
    expect(objects.filter(({ object }) => isAdopted(object)).map(({ rel }) => rel)).toEqual([
      "Languages/Русский.xml",
      ...ADOPTED_CATALOGS.map((name) => `Catalogs/${name}.xml`),
    ]);
    expect(adoptionProblems(configuration(), objects)).toEqual([]);
  });

  it("the catalogs the settings need are adopted by name: no base object UUID, the five generated types of a catalog", () => {
    const catalogs = listed().filter((entry) => entry.kind === "Catalog");
    expect(catalogs.map((entry) => entry.name)).toEqual(ADOPTED_CATALOGS);
    const problems = catalogs.flatMap((entry) => {
      const rel = `Catalogs/${entry.name}.xml`;
      return adoptedCatalogProblems(objectOf(rel)).map((problem) => `${rel}:${problem}`);
    });
    expect(problems).toEqual([]);
  });

  it("fails on a catalog adopted by UUID, an own catalog and a catalog without its generated types", () => {
    const adopted = objectOf("Catalogs/Склады.xml");
    const byUuid = parseXml(
      [
        "<Catalog>",
        "<InternalInfo/>",
        "<Properties><ObjectBelonging>Adopted</ObjectBelonging><Name>Склады</Name><Comment/>",
        "<ExtendedConfigurationObject>7aadbb67-0000-0000-0000-000000000000</ExtendedConfigurationObject></Properties>",
        "</Catalog>",
      ].join("\n"),
    );
    if (!byUuid.ok) throw new Error("fixture");
    expect(adoptedCatalogProblems(byUuid.root)).toEqual([
      "4: Склады names a base object UUID; adopted objects are matched by name here",
      "1: generated types of Склады are [], expected [CatalogObject.Склады/Object, CatalogRef.Склады/Ref, CatalogSelection.Склады/Selection, CatalogList.Склады/List, CatalogManager.Склады/Manager]",
    ]);
    const own = {
      ...adopted,
      children: adopted.children.map((node) =>
        node.name === "Properties"
          ? { ...node, children: node.children.filter((property) => property.name !== "ObjectBelonging") }
          : node,
      ),
    };
    expect(adoptedCatalogProblems(own)).toEqual([
      `${adopted.line}: Склады is not <ObjectBelonging>Adopted</ObjectBelonging>`,
    ]);
  });

  it("fails when matching is by UUID and an adopted object has none", () => {
    const config = parseXml(
      "<Configuration><Properties><KeepMappingToExtendedConfigurationObjectsByIDs>true</KeepMappingToExtendedConfigurationObjectsByIDs></Properties></Configuration>",
    );
    if (!config.ok) throw new Error("fixture");
    const language = objectOf("Languages/Русский.xml");
    expect(adoptionProblems(config.root, [{ rel: "Languages/Русский.xml", object: language }])).toEqual([
      `Languages/Русский.xml:${language.line}: adopted Language without ExtendedConfigurationObject while KeepMappingToExtendedConfigurationObjectsByIDs is true`,
    ]);
  });
});

describe("property order per object kind, as in real Designer dumps", () => {
  it("every object and child object writes its properties in Designer's order, own objects in full", () => {
    const problems: string[] = [];
    for (const rel of ["Configuration.xml", ...objectFiles()]) {
      for (const { element } of walk(objectOf(rel))) {
        if (child(element, "Properties") === undefined) continue;
        const complete = rel !== "Configuration.xml" && !isAdopted(element);
        problems.push(...propertyOrderProblems(element, complete).map((problem) => `${rel}:${problem}`));
      }
    }
    expect(problems).toEqual([]);
  });

  it("fails on a swapped pair, an unknown property and a missing one", () => {
    const parsed = parseXml(
      "<HTTPService>\n<Properties>\n<Name/>\n<Comment/>\n<Synonym/>\n<RootURL/>\n<Colour/>\n</Properties>\n</HTTPService>",
    );
    if (!parsed.ok) throw new Error("fixture");
    expect(propertyOrderProblems(parsed.root, true)).toEqual([
      "5: <Synonym> comes after <Comment>; Designer writes it before",
      "7: <Colour> is not a property of <HTTPService> in Designer dumps",
      "1: <HTTPService> lacks <ReuseSessions>",
      "1: <HTTPService> lacks <SessionMaxAge>",
    ]);
  });

  it("Configuration.xml lists objects grouped by kind in Designer's order", () => {
    const order = Object.keys(KIND_DIRS);
    const problems: string[] = [];
    let last = -1;
    for (const entry of listed()) {
      const at = order.indexOf(entry.kind);
      if (at < last) problems.push(`Configuration.xml:${entry.line}: <${entry.kind}> after <${order[last]}>`);
      last = Math.max(last, at);
    }
    expect(problems).toEqual([]);
    expect(path(configuration(), "Properties", "DefaultRoles")).toBeDefined();
    expect(path(configuration(), "Properties", "InterfaceCompatibilityMode")?.text).toBe("TaxiEnableVersion8_2");
  });
});

describe("settings typed exactly", () => {
  it("each reference constant holds exactly one catalog, the one the order needs", () => {
    const constants = listed()
      .filter((entry) => entry.kind === "Constant")
      .map((entry) => entry.name);
    expect(constants).toEqual(expect.arrayContaining(Object.keys(CATALOG_SETTINGS)));
    const problems = Object.entries(CATALOG_SETTINGS).flatMap(([constant, catalog]) =>
      catalogReferenceProblems(objectOf(`Constants/${constant}.xml`), catalog).map(
        (problem) => `Constants/${constant}.xml:${problem}`,
      ),
    );
    expect(problems).toEqual([]);
  });

  it("every reference type in the dump names an object of the extension, none is «any catalog»", () => {
    const known = new Set(listed().map((entry) => `${entry.kind}.${entry.name}`));
    const problems = objectFiles().flatMap((rel) =>
      referenceTypeProblems(root(rel), known).map((problem) => `${rel}:${problem}`),
    );
    expect(problems).toEqual([]);
  });

  it("fails on the constants as version 1.1 wrote them («any catalog») and on a catalog not adopted", () => {
    const old = parseXml(
      "<Constant>\n<Properties>\n<Name>ИнтСайт_Склад</Name>\n<Type>\n<v8:TypeSet>cfg:CatalogRef</v8:TypeSet>\n</Type>\n</Properties>\n</Constant>",
    );
    if (!old.ok) throw new Error("fixture");
    expect(catalogReferenceProblems(old.root, "Склады")).toEqual([
      "4: the type is v8:TypeSet cfg:CatalogRef; expected exactly v8:Type cfg:CatalogRef.Склады",
    ]);
    expect(referenceTypeProblems(old.root, new Set(["Catalog.Склады"]))).toEqual([
      "5: cfg:CatalogRef accepts any Catalog",
    ]);
    const wide = parseXml(
      "<Constant>\n<Properties>\n<Type>\n<v8:Type>cfg:CatalogRef.Склады</v8:Type>\n<v8:Type>cfg:CatalogRef.Кассы</v8:Type>\n</Type>\n</Properties>\n</Constant>",
    );
    if (!wide.ok) throw new Error("fixture");
    expect(catalogReferenceProblems(wide.root, "Склады")).toEqual([
      "3: the type is v8:Type cfg:CatalogRef.Склады, v8:Type cfg:CatalogRef.Кассы; expected exactly v8:Type cfg:CatalogRef.Склады",
    ]);
    expect(referenceTypeProblems(wide.root, new Set(["Catalog.Склады"]))).toEqual([
      "5: cfg:CatalogRef.Кассы: Catalog Кассы is not in the extension (adopt it)",
    ]);
  });

  it("the choice settings are strings, edited in the settings form by a choice list filled from the order module", () => {
    const form = root(`${SETTINGS_FORM}/Ext/Form.xml`);
    const fields = new Map(
      [...walk(form)]
        .map(({ element }) => element)
        .filter((element) => element.name === "InputField")
        .map((field) => [child(field, "DataPath")?.text.trim(), field]),
    );
    const file = files.find((candidate) => candidate.rel === `${SETTINGS_FORM}/Ext/Form/Module.bsl`);
    const calls = callsIn(lexBsl(file?.text ?? "").tokens).map((call) => `${call.qualifier}.${call.name}`);
    for (const [constant, { length, source }] of Object.entries(CHOICE_SETTINGS)) {
      const type = path(objectOf(`Constants/${constant}.xml`), "Properties", "Type");
      expect(child(type, "v8:Type")?.text, constant).toBe("xs:string");
      expect(path(type, "v8:StringQualifiers", "v8:Length")?.text, constant).toBe(length);
      const field = fields.get(`НаборКонстант.${constant}`);
      expect(child(field, "ListChoiceMode")?.text, `${constant}: a field with a choice list`).toBe("true");
      expect(calls, constant).toContain(`ИнтСайт_ОбработкаЗаказов.${source}`);
    }
    // The constants are typed now: the form no longer narrows any field's type.
    expect(calls).not.toContain("ИнтСайт_ОбработкаЗаказов.ТипыНастроекСсылок");
    expect(file?.text).not.toContain("ОграничениеТипа");
  });
});

describe("role", () => {
  /** Objects a Rights.xml names that the extension does not have. */
  function unknownRightsObjects(rights: XmlElement, known: ReadonlySet<string>): string[] {
    return childrenNamed(rights, "object")
      .map((object) => ({ name: child(object, "name")?.text.trim() ?? "", line: object.line }))
      .filter((object) => !known.has(object.name))
      .map((object) => `${object.line}: ${object.name} does not exist in the extension`);
  }

  function knownObjects(): Set<string> {
    const known = new Set(listed().map((entry) => `${entry.kind}.${entry.name}`));
    for (const entry of listed().filter((candidate) => candidate.kind === "HTTPService")) {
      for (const template of childrenNamed(
        child(objectOf(`HTTPServices/${entry.name}.xml`), "ChildObjects") ?? configuration(),
        "URLTemplate",
      )) {
        for (const method of childrenNamed(child(template, "ChildObjects") ?? template, "Method")) {
          known.add(`HTTPService.${entry.name}.URLTemplate.${nameOf(template)}.Method.${nameOf(method)}`);
        }
      }
    }
    return known;
  }

  it("names only objects that exist, gives View on the register, Read on every setting, Use on every method", () => {
    const rel = "Roles/ИнтСайт_ИнтеграцияССайтом/Ext/Rights.xml";
    const rights = root(rel);
    expect(unknownRightsObjects(rights, knownObjects()).map((problem) => `${rel}:${problem}`)).toEqual([]);
    const granted = new Map(
      childrenNamed(rights, "object").map((object) => [
        child(object, "name")?.text.trim() ?? "",
        childrenNamed(object, "right")
          .filter((right) => child(right, "value")?.text.trim() === "true")
          .map((right) => child(right, "name")?.text.trim()),
      ]),
    );
    expect(granted.get("InformationRegister.ИнтСайт_ПринятыеСобытия")).toEqual(["Read", "Update", "View"]);
    // Both registers: the idempotency log and the customer keys (written inside the order transaction).
    const registers = listed().filter((candidate) => candidate.kind === "InformationRegister");
    expect(registers.map((entry) => entry.name)).toEqual(["ИнтСайт_ПринятыеСобытия", "ИнтСайт_КлючиПокупателей"]);
    for (const entry of registers) {
      expect(grantedRights(rights).get(`InformationRegister.${entry.name}`), entry.name).toEqual([
        "Read",
        "Update",
        "View",
      ]);
    }
    for (const entry of listed().filter((candidate) => candidate.kind === "Constant")) {
      expect(granted.get(`Constant.${entry.name}`), entry.name).toEqual(["Read"]);
    }
    const methods = [...knownObjects()].filter((name) => name.includes(".Method."));
    expect(methods).toHaveLength(3);
    for (const method of methods) expect(granted.get(method), method).toEqual(["Use"]);
  });

  it("the operator's role reads and views both registers and the section, and nothing else: no setting, no settings form", () => {
    const role = objectOf("Roles/ИнтСайт_ОператорИнтеграции.xml");
    expect(synonymOf(role)).toBe("Оператор интеграции с сайтом");
    const rights = root(OPERATOR_ROLE);
    expect(unknownRightsObjects(rights, knownObjects()).map((problem) => `${OPERATOR_ROLE}:${problem}`)).toEqual([]);
    expect(operatorRightsProblems(rights, `CommonForm.${SETTINGS_FORM.split("/")[1]}`)).toEqual([]);
    expect(Object.fromEntries(grantedRights(rights))).toEqual({
      "Subsystem.ИнтСайт_ИнтеграцияССайтом": ["View"],
      "InformationRegister.ИнтСайт_ПринятыеСобытия": ["Read", "View"],
      "InformationRegister.ИнтСайт_КлючиПокупателей": ["Read", "View"],
    });
    expect(synonymOf(objectOf("Roles/ИнтСайт_ИнтеграцияССайтом.xml"))).toBe(
      "Интеграция с сайтом (технический пользователь)",
    );
  });

  it("fails when the operator's role reaches a setting, the settings form, the HTTP service or writes", () => {
    // The technical role has all of these: as the operator's it must fail on each.
    const problems = operatorRightsProblems(root(TECHNICAL_ROLE), "CommonForm.ИнтСайт_НастройкиИнтеграции");
    expect(problems.some((problem) => problem.endsWith("names the setting Constant.ИнтСайт_Организация"))).toBe(true);
    expect(problems.some((problem) => problem.includes("names the HTTP service HTTPService.ИнтСайт_Интеграция"))).toBe(
      true,
    );
    expect(
      problems.some((problem) => problem.endsWith("grants Update on InformationRegister.ИнтСайт_ПринятыеСобытия")),
    ).toBe(true);
    const form = parseXml(
      "<Rights>\n<object><name>CommonForm.ИнтСайт_НастройкиИнтеграции</name><right><name>View</name><value>true</value></right></object>\n</Rights>",
    );
    if (!form.ok) throw new Error("fixture");
    expect(operatorRightsProblems(form.root, "CommonForm.ИнтСайт_НастройкиИнтеграции")).toEqual([
      "2: names the settings form CommonForm.ИнтСайт_НастройкиИнтеграции",
    ]);
  });

  it("fails on a right for an object the extension does not have", () => {
    const parsed = parseXml("<Rights>\n<object><name>Document.ЗаказКлиента</name></object>\n</Rights>");
    if (!parsed.ok) throw new Error("fixture");
    expect(unknownRightsObjects(parsed.root, knownObjects())).toEqual([
      "2: Document.ЗаказКлиента does not exist in the extension",
    ]);
  });
});

describe("the order lines in the adaptation code (УТ 11.5 fill checks)", () => {
  /** Columns assigned on a row of Товары (СтрокаТоваров.X = …) and the actions passed to ОбработатьТЧ. */
  function lineFacts(tokens: readonly Token[]): { assigned: Set<string>; actions: Set<string>; calls: Set<string> } {
    const assigned = new Set<string>();
    const actions = new Set<string>();
    const calls = new Set<string>();
    tokens.forEach((token, index) => {
      const [dot, member, equals] = [tokens[index + 1], tokens[index + 2], tokens[index + 3]];
      if (token.text === "СтрокаТоваров" && dot?.text === "." && member !== undefined && equals?.text === "=") {
        assigned.add(member.text);
      }
      if (token.text === "Действия" && dot?.text === "." && member?.text === "Вставить") {
        const name = tokens[index + 4];
        if (name?.kind === "string") actions.add(name.text);
      }
      if (dot?.text === "." && member !== undefined && tokens[index + 3]?.text === "(") {
        calls.add(`${token.text}.${member.text}`);
      }
    });
    return { assigned, actions, calls };
  }

  /** Problems with the order lines: what УТ 11.5 requires and what must be left to the configuration. */
  function lineProblems(tokens: readonly Token[]): string[] {
    const { assigned, actions, calls } = lineFacts(tokens);
    const problems: string[] = [];
    for (const column of ["Номенклатура", "Количество", "Цена", "Сумма", "ВариантОбеспечения", "ДатаОтгрузки"]) {
      if (!assigned.has(column)) problems.push(`Товары.${column} is never set`);
    }
    for (const column of ["СтавкаНДС", "СуммаНДС", "СуммаСНДС"]) {
      if (assigned.has(column)) problems.push(`Товары.${column} is computed by hand, not by the configuration`);
    }
    if (!calls.has("ОбработкаТабличнойЧастиСервер.ОбработатьТЧ")) {
      problems.push("ОбработкаТабличнойЧастиСервер.ОбработатьТЧ is never called");
    }
    for (const action of ["ЗаполнитьСтавкуНДС", "ПересчитатьСуммуНДС", "ПересчитатьСуммуСНДС"]) {
      if (!actions.has(action)) problems.push(`the action ${action} is not passed to ОбработатьТЧ`);
    }
    if (
      tokens.some(
        (token, index) =>
          token.text === "ЦенаВключаетНДС" && tokens[index + 1]?.text === "=" && tokens[index - 1]?.text === ".",
      )
    ) {
      problems.push("ЦенаВключаетНДС is forced; it comes from the agreement");
    }
    return problems;
  }

  it("set ВариантОбеспечения and the shipping date, and leave VAT to the configuration's table-part processing", () => {
    expect(lineProblems(bslTokens(ORDERS))).toEqual([]);
  });

  it("fails on the lines as the first version wrote them", () => {
    const old = lexBsl(
      [
        "СтрокаТоваров.Номенклатура = Н; СтрокаТоваров.Количество = 1; СтрокаТоваров.Цена = 1;",
        "СтрокаТоваров.Сумма = 1; СтрокаТоваров.СуммаСНДС = СтрокаТоваров.Сумма; Заказ.ЦенаВключаетНДС = Истина;",
      ].join("\n"),
    ).tokens;
    expect(lineProblems(old)).toEqual([
      "Товары.ВариантОбеспечения is never set",
      "Товары.ДатаОтгрузки is never set",
      "Товары.СуммаСНДС is computed by hand, not by the configuration",
      "ОбработкаТабличнойЧастиСервер.ОбработатьТЧ is never called",
      "the action ЗаполнитьСтавкуНДС is not passed to ОбработатьТЧ",
      "the action ПересчитатьСуммуНДС is not passed to ОбработатьТЧ",
      "the action ПересчитатьСуммуСНДС is not passed to ОбработатьТЧ",
      "ЦенаВключаетНДС is forced; it comes from the agreement",
    ]);
  });

  it("fills the site's number and date, and clears the message buffer first thing in each call", () => {
    const tokens = bslTokens(ORDERS);
    const { assigned } = lineFacts(
      tokens.map((token) => (token.text === "Заказ" ? { ...token, text: "СтрокаТоваров" } : token)),
    );
    expect([...assigned]).toEqual(expect.arrayContaining(["НомерПоДаннымКлиента", "ДатаПоДаннымКлиента", "Статус"]));
    const file = files.find((candidate) => candidate.rel === ORDERS);
    const method = moduleStructure(lexBsl(file?.text ?? "")).methods.find((m) => m.name === "ОбработатьЗаказОплачен");
    const first = method?.body.find((item) => item.type === "stmt");
    expect(first?.type === "stmt" ? first.tokens.map((token) => token.text).join("") : "").toBe(
      "ПолучитьСообщенияПользователю(Истина)",
    );
  });
});

describe("one contract: versions and the key alphabet agree everywhere", () => {
  it("ВерсияКонтракта() in BSL, CONTRACT_VERSION in the gateway and the health case say the same", () => {
    expect(returnedString(ORDERS, "ВерсияКонтракта")).toBe(CONTRACT_VERSION);
    const health = loadContract().find((c) => c.name === "health");
    expect(health?.expect.body.contract_version).toBe(CONTRACT_VERSION);
  });

  it("ВерсияРасширения() is the Version in Configuration.xml", () => {
    expect(returnedString(ORDERS, "ВерсияРасширения")).toBe(path(configuration(), "Properties", "Version")?.text);
  });

  it("1c/README.md states the Version in Configuration.xml", () => {
    const version = path(configuration(), "Properties", "Version")?.text ?? "";
    expect(version).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(/Версия расширения — \*\*([\d.]+)\*\*/u.exec(README)?.[1]).toBe(version);
  });

  it("the BSL key alphabet and length are the gateway's", () => {
    const alphabet = returnedString(ORDERS, "АлфавитКлюча") ?? "";
    const accepted = [...Array(128).keys()]
      .map((code) => String.fromCharCode(code))
      .filter((ch) => KEY_PATTERN.test(ch));
    expect([...alphabet].sort()).toEqual(accepted.sort());
    expect(returnedString(ORDERS, "МаксимальнаяДлинаКлюча")).toBe(String(KEY_MAX_LENGTH));
    expect(alphabet).not.toMatch(/[/%]/);
  });
});

describe("event log and README", () => {
  it("every event-log entry is named through НСтр with the base's main language code (ITS #498)", () => {
    const problems: string[] = [];
    for (const file of files.filter((candidate) => candidate.rel.endsWith(".bsl"))) {
      const tokens = lexBsl(file.text).tokens;
      tokens.forEach((token, index) => {
        if (token.lower !== "записьжурналарегистрации" || tokens[index + 1]?.text !== "(") return;
        if (tokens[index + 2]?.text !== "ИмяСобытияЖурнала") {
          problems.push(`${file.rel}:${token.line}: the event name is not ИмяСобытияЖурнала()`);
        }
      });
    }
    expect(problems).toEqual([]);
    const tokens = bslTokens(ORDERS);
    const start = tokens.findIndex(
      (token, index) => token.text === "ИмяСобытияЖурнала" && tokens[index - 1]?.keyword === "FUNCTION",
    );
    const body = tokens.slice(
      start,
      tokens.findIndex((token, index) => index > start && token.keyword === "ENDFUNCTION"),
    );
    // String tokens hold their decoded value, without quotes.
    expect(body.map((token) => token.text).join("")).toContain(
      "НСтр(ru = 'Интеграция с сайтом.Заказ оплачен',ОбщегоНазначения.КодОсновногоЯзыка())",
    );
  });

  it("1c/README.md applies the extension with /UpdateDBCfg -Extension, and says to add to default.vrd, not replace it", () => {
    const updates = [...README.matchAll(/\/UpdateDBCfg(?:\s+-Extension\s+([\p{L}\p{N}_]+))?/gu)].map(
      (match) => match[1],
    );
    expect(updates.length).toBeGreaterThan(0);
    expect(updates).toEqual(updates.map(() => "ИнтеграцияССайтом"));
    expect(README).toMatch(/\*\*Не заменяйте\*\* `default\.vrd`/);
    expect(README).toContain('publishExtensionsByDefault="true"');
  });

  it("1c/README.md names one technical user everywhere", () => {
    const names = [
      ...README.matchAll(/--user\s+(\S+)/g),
      ...README.matchAll(/ONEC_USER=(\S+?)[`,\s]/g),
      ...README.matchAll(/AUTH='([^:']+):/g),
      ...README.matchAll(/curl -u ([^:\s]+):/g),
    ].map((match) => match[1]);
    expect(names.length).toBeGreaterThanOrEqual(4);
    expect(new Set(names)).toEqual(new Set(["site_gateway"]));
  });
});

describe("subsystem", () => {
  it("puts the register, every setting and the settings form in the section «Интеграция с сайтом», and only objects that exist", () => {
    const subsystem = objectOf("Subsystems/ИнтСайт_ИнтеграцияССайтом.xml");
    const content = childrenNamed(path(subsystem, "Properties", "Content") ?? subsystem, "xr:Item").map((item) =>
      item.text.trim(),
    );
    const known = new Set(listed().map((entry) => `${entry.kind}.${entry.name}`));
    expect(content.filter((name) => !known.has(name))).toEqual([]);
    const expected = listed()
      .filter((entry) => ["Constant", "InformationRegister", "CommonForm"].includes(entry.kind))
      .map((entry) => `${entry.kind}.${entry.name}`);
    expect([...content].sort()).toEqual([...expected].sort());
    expect(path(subsystem, "Properties", "IncludeInCommandInterface")?.text).toBe("true");
  });
});

describe("scheduled job and publication", () => {
  it("the purge job calls an exported procedure of a server common module", () => {
    const job = objectOf("ScheduledJobs/ИнтСайт_ОчисткаПринятыхСобытий.xml");
    const [kind, module, procedure] = (path(job, "Properties", "MethodName")?.text ?? "").split(".");
    expect(kind).toBe("CommonModule");
    expect(path(objectOf(`CommonModules/${module}.xml`), "Properties", "Server")?.text).toBe("true");
    const file = files.find((candidate) => candidate.rel === `CommonModules/${module}/Ext/Module.bsl`);
    const method = moduleStructure(lexBsl(file?.text ?? "")).methods.find((m) => m.name === procedure);
    expect(method).toMatchObject({ kind: "PROCEDURE", exported: true, params: [] });
  });

  /** What in a default.vrd would break the base's other publications. */
  function vrdProblems(text: string): string[] {
    const parsed = parseXml(text.replace(/^\uFEFF/, ""));
    if (!parsed.ok) return [`${parsed.problem.line}: ${parsed.problem.message}`];
    const problems: string[] = [];
    const services = child(parsed.root, "httpServices");
    if (services?.attributes.get("publishByDefault") === "false") {
      problems.push('publishByDefault="false" unpublishes the configuration\'s own HTTP services');
    }
    if (child(parsed.root, "standardOdata")?.attributes.get("enable") === "false") {
      problems.push("standardOdata enable=false turns OData off for everyone");
    }
    if (services?.attributes.get("publishExtensionsByDefault") !== "true") {
      const named = childrenNamed(services ?? parsed.root, "service").some(
        (service) => service.attributes.get("name") === "ИнтСайт_Интеграция",
      );
      if (!named) problems.push("the extension's service is not published");
    }
    return problems;
  }

  it("default.vrd.example publishes the extension's service without touching the base's own", () => {
    expect(vrdProblems(readFileSync(VRD_FILE, "utf8"))).toEqual([]);
  });

  it("fails on the first version's example", () => {
    const old =
      '<point><ws publishExtensionsByDefault="false"/><httpServices publishByDefault="false" publishExtensionsByDefault="true"/><standardOdata enable="false"/></point>';
    expect(vrdProblems(old)).toEqual([
      'publishByDefault="false" unpublishes the configuration\'s own HTTP services',
      "standardOdata enable=false turns OData off for everyone",
    ]);
  });
});
