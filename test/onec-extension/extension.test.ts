import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadContract } from "../../src/onec/contract/cases.ts";
import { PROCESSING_ERROR, REFUSAL_CODES } from "../../src/onec/contract/codes.ts";
import {
  callsIn,
  checkBlocks,
  checkDocComments,
  checkRegions,
  checkTransactionShape,
  isCallStatement,
  type Lexed,
  lexBsl,
  lowerSet,
  type MethodInfo,
  type ModuleStructure,
  moduleStructure,
  type Problem,
  type RegionRules,
  type Token,
} from "./bsl-lite.ts";
import {
  collectUuids,
  compareWithSnapshot,
  extensionFiles,
  isAdopted,
  KIND_DIRS,
  metadataObject,
  nameOf,
  parseExtensionXml,
  SNAPSHOT_FILE,
  type SourceFile,
  UUID,
  type UuidEntry,
  type UuidSnapshot,
  VRD_FILE,
  withNewEntries,
} from "./extension-tree.ts";
import { child, childrenNamed, parseXml, path, walk, type XmlElement } from "./xml-lite.ts";

/**
 * Static checks of the 1C extension in 1c/extension. No 1C platform or BSL tooling can run here,
 * so these are our own: XML well-formedness and dump hygiene, stable UUIDs, the object list, the
 * HTTP contract, and BSL structure (blocks, ITS #783 transactions, #453 comments, #455 regions).
 * Every failure names file:line.
 */

const EXPECTED_PREFIX = "ИнтСайт_";
const ADAPTATION_REGION = "АдаптацияПодКонфигурацию";

const files = extensionFiles();
const xmlFiles = files.filter((file) => file.rel.endsWith(".xml"));
const bslFiles = files.filter((file) => file.rel.endsWith(".bsl"));
const parsed = new Map<string, XmlElement>();

function xml(rel: string): XmlElement {
  let root = parsed.get(rel);
  if (root === undefined) {
    const file = files.find((candidate) => candidate.rel === rel);
    if (file === undefined) throw new Error(`${rel} is missing from 1c/extension`);
    root = parseExtensionXml(file);
    parsed.set(rel, root);
  }
  return root;
}

function objectOf(rel: string): XmlElement {
  const object = metadataObject(xml(rel));
  if (object === undefined) throw new Error(`${rel}: the root element is not <MetaDataObject>`);
  return object;
}

function at(file: string, problems: readonly Problem[]): string[] {
  return problems.map((problem) => `${file}:${problem.line}: ${problem.message}`);
}

type ModuleKind = "CommonModule" | "HTTPService" | "ManagerModule" | "FormModule";

interface BslModule {
  readonly file: SourceFile;
  readonly kind: ModuleKind;
  /** Object name: the common module, HTTP service or register the module belongs to; for a form, Owner.Form. */
  readonly owner: string;
  readonly lexed: Lexed;
  readonly structure: ModuleStructure;
}

function moduleKind(rel: string): { kind: ModuleKind; owner: string } {
  const [dir, owner = ""] = rel.split("/");
  if (dir === "CommonModules" && rel.endsWith("/Ext/Module.bsl")) return { kind: "CommonModule", owner };
  if (dir === "HTTPServices" && rel.endsWith("/Ext/Module.bsl")) return { kind: "HTTPService", owner };
  if (rel.endsWith("/Ext/ManagerModule.bsl")) return { kind: "ManagerModule", owner };
  // CommonForms/<Form>/Ext/Form/Module.bsl and <Kind>/<Object>/Forms/<Form>/Ext/Form/Module.bsl
  if (rel.endsWith("/Ext/Form/Module.bsl")) {
    const parts = rel.split("/");
    return { kind: "FormModule", owner: dir === "CommonForms" ? owner : `${owner}.${parts[3] ?? ""}` };
  }
  throw new Error(`${rel}: a module kind the checks do not know yet; add it to moduleKind()`);
}

const modules: BslModule[] = bslFiles.map((file) => {
  const lexed = lexBsl(file.text);
  return { file, ...moduleKind(file.rel), lexed, structure: moduleStructure(lexed) };
});

function moduleOf(kind: ModuleKind, owner: string): BslModule {
  const found = modules.find((candidate) => candidate.kind === kind && candidate.owner === owner);
  if (found === undefined) throw new Error(`no ${kind} module for ${owner}`);
  return found;
}

const configuration = (): XmlElement => objectOf("Configuration.xml");
const listedObjects = (): Array<{ kind: string; name: string; line: number }> =>
  (child(configuration(), "ChildObjects")?.children ?? []).map((entry) => ({
    kind: entry.name,
    name: entry.text.trim(),
    line: entry.line,
  }));
const ownObjects = (kind: string): string[] =>
  listedObjects()
    .filter((entry) => entry.kind === kind)
    .filter((entry) => !isAdopted(objectOf(`${KIND_DIRS[kind]}/${entry.name}.xml`)))
    .map((entry) => entry.name);

describe("1c/extension: files of the Designer dump", () => {
  it("has the objects of the integration", () => {
    expect(xmlFiles.map((file) => file.rel)).toContain("Configuration.xml");
    expect(bslFiles.length).toBeGreaterThanOrEqual(4);
  });

  it("every XML file is well-formed", () => {
    const problems = xmlFiles.flatMap((file) => {
      const result = parseXml(file.text);
      return result.ok ? [] : [`${file.rel}:${result.problem.line}: ${result.problem.message}`];
    });
    expect(problems).toEqual([]);
  });

  it("every .xml and .bsl is UTF-8 with a BOM and CRLF line ends, as Designer writes them", () => {
    const problems: string[] = [];
    for (const file of [...xmlFiles, ...bslFiles]) {
      if (!(file.bytes[0] === 0xef && file.bytes[1] === 0xbb && file.bytes[2] === 0xbf)) {
        problems.push(`${file.rel}:1: no UTF-8 BOM (EF BB BF)`);
      }
      const lines = file.text.split("\n");
      const bare = lines.findIndex((line, index) => index < lines.length - 1 && !line.endsWith("\r"));
      if (bare >= 0) problems.push(`${file.rel}:${bare + 1}: line ends with LF, not CRLF`);
      const loneCr = lines.findIndex((line) => line.slice(0, -1).includes("\r"));
      if (loneCr >= 0) problems.push(`${file.rel}:${loneCr + 1}: stray CR inside the line`);
      if (file.text.includes("\uFFFD")) problems.push(`${file.rel}: not valid UTF-8`);
    }
    expect(problems).toEqual([]);
  });

  it("every XML file has the dump format version of Configuration.xml", () => {
    const expected = xml("Configuration.xml").attributes.get("version");
    expect(expected, "Configuration.xml: <MetaDataObject> has no version attribute").toMatch(/^2\.\d+$/);
    const problems = xmlFiles.flatMap((file) => {
      const root = xml(file.rel);
      const version = root.attributes.get("version");
      return version === expected
        ? []
        : [`${file.rel}:${root.line}: <${root.name}> version="${version ?? ""}", Configuration.xml has "${expected}"`];
    });
    expect(problems).toEqual([]);
  });
});

describe("1c/extension: UUIDs", () => {
  // ConfigDumpInfo.xml (written by Designer for partial loads) repeats the object ids: not a source of UUIDs.
  const entries = (): UuidEntry[] =>
    xmlFiles
      .filter((file) => file.rel !== "ConfigDumpInfo.xml")
      .flatMap((file) => collectUuids(file.rel, xml(file.rel)));

  it("every UUID is well-formed and used once across the extension", () => {
    const problems: string[] = [];
    const seen = new Map<string, UuidEntry>();
    for (const entry of entries()) {
      if (!UUID.test(entry.uuid))
        problems.push(`${entry.file}:${entry.line}: ${entry.key}: "${entry.uuid}" is not a UUID`);
      const first = seen.get(entry.uuid);
      if (first !== undefined) {
        problems.push(
          `${entry.file}:${entry.line}: ${entry.key} reuses uuid ${entry.uuid} of ${first.key} (${first.file}:${first.line})`,
        );
      } else seen.set(entry.uuid, entry);
    }
    expect(entries().length).toBeGreaterThan(10);
    expect(problems).toEqual([]);
  });

  it("UUIDs are unchanged against 1c/uuids.snapshot.json", () => {
    let snapshot = JSON.parse(readFileSync(SNAPSHOT_FILE, "utf8")) as UuidSnapshot;
    if (process.env.ONEC_UUID_SNAPSHOT === "update") {
      // Adds entries for new objects only; a changed UUID still fails below.
      snapshot = { ...snapshot, uuids: withNewEntries(entries(), snapshot.uuids) };
      writeFileSync(SNAPSHOT_FILE, `${JSON.stringify(snapshot, null, 2)}\n`);
    }
    expect(compareWithSnapshot(entries(), snapshot.uuids)).toEqual([]);
  });
});

describe("1c/extension: Configuration.xml", () => {
  it("lists every object that has a file, and every listed object has its file", () => {
    const problems: string[] = [];
    const listed = new Set<string>();
    for (const entry of listedObjects()) {
      const dir = KIND_DIRS[entry.kind];
      if (dir === undefined) {
        problems.push(`Configuration.xml:${entry.line}: unknown object kind <${entry.kind}>; add it to KIND_DIRS`);
        continue;
      }
      const rel = `${dir}/${entry.name}.xml`;
      listed.add(`${dir}/${entry.name}`);
      if (!files.some((file) => file.rel === rel)) {
        problems.push(`Configuration.xml:${entry.line}: ${entry.kind} ${entry.name} is listed but ${rel} is missing`);
        continue;
      }
      const object = objectOf(rel);
      if (object.name !== entry.kind)
        problems.push(`${rel}:${object.line}: <${object.name}>, expected <${entry.kind}>`);
      if (nameOf(object) !== entry.name) {
        problems.push(
          `${rel}:${object.line}: Name is "${nameOf(object)}", the file and Configuration.xml say "${entry.name}"`,
        );
      }
    }
    for (const file of files) {
      const parts = file.rel.split("/");
      if (parts.length === 1) {
        if (!["Configuration.xml", "ConfigDumpInfo.xml"].includes(file.rel)) {
          problems.push(`${file.rel}: unexpected file at the root of the dump`);
        }
        continue;
      }
      const [dir, second = ""] = parts;
      const objectKey = parts.length === 2 ? `${dir}/${second.replace(/\.xml$/, "")}` : `${dir}/${second}`;
      if (!listed.has(objectKey)) problems.push(`${file.rel}: belongs to no object listed in Configuration.xml`);
    }
    expect(problems).toEqual([]);
  });

  it(`own objects carry the name prefix ${EXPECTED_PREFIX}`, () => {
    const prefix = path(configuration(), "Properties", "NamePrefix");
    expect(prefix?.text, "Configuration.xml: NamePrefix").toBe(EXPECTED_PREFIX);
    const problems: string[] = [];
    for (const entry of listedObjects()) {
      const rel = `${KIND_DIRS[entry.kind]}/${entry.name}.xml`;
      if (!files.some((file) => file.rel === rel)) continue; // reported by the listing test
      if (!isAdopted(objectOf(rel)) && !entry.name.startsWith(EXPECTED_PREFIX)) {
        problems.push(
          `Configuration.xml:${entry.line}: own ${entry.kind} ${entry.name} lacks the prefix ${EXPECTED_PREFIX}`,
        );
      }
    }
    expect(problems).toEqual([]);
  });

  it("every own common module and HTTP service has its module, every role its rights", () => {
    const expected = [
      ...ownObjects("CommonModule").map((name) => `CommonModules/${name}/Ext/Module.bsl`),
      ...ownObjects("HTTPService").map((name) => `HTTPServices/${name}/Ext/Module.bsl`),
      ...ownObjects("Role").map((name) => `Roles/${name}/Ext/Rights.xml`),
    ];
    const missing = expected.filter((rel) => !files.some((file) => file.rel === rel));
    expect(missing.map((rel) => `${rel}: missing`)).toEqual([]);
  });
});

describe("1c/extension: HTTP service", () => {
  const services = (): string[] => ownObjects("HTTPService");

  it("keeps the gateway's contract: root URL integration, POST /v1/orders/paid, GET /v1/events/{EventID}, GET /v1/health", () => {
    expect(services()).toHaveLength(1);
    const service = objectOf(`HTTPServices/${services()[0]}.xml`);
    expect(path(service, "Properties", "RootURL")?.text).toBe("integration");
    const templates = childrenNamed(child(service, "ChildObjects") ?? service, "URLTemplate").map((template) => [
      path(template, "Properties", "Template")?.text,
      childrenNamed(child(template, "ChildObjects") ?? template, "Method").map(
        (method) => path(method, "Properties", "HTTPMethod")?.text,
      ),
    ]);
    expect(Object.fromEntries(templates)).toEqual({
      "/v1/orders/paid": ["POST"],
      "/v1/events/{EventID}": ["GET"],
      "/v1/health": ["GET"],
    });
  });

  it("every Handler is a non-exported function with one parameter in the service module", () => {
    const problems: string[] = [];
    for (const serviceName of services()) {
      const rel = `HTTPServices/${serviceName}.xml`;
      const module = moduleOf("HTTPService", serviceName);
      for (const { element } of walk(objectOf(rel))) {
        if (element.name !== "Method") continue;
        const handler = path(element, "Properties", "Handler");
        const name = handler?.text.trim() ?? "";
        const where = `${module.file.rel}`;
        if (name === "") {
          problems.push(`${rel}:${element.line}: method without a Handler`);
          continue;
        }
        const method = module.structure.methods.find(
          (candidate) => candidate.name.toLowerCase() === name.toLowerCase(),
        );
        if (method === undefined) {
          problems.push(`${rel}:${handler?.line}: handler ${name} is not defined in ${where}`);
          continue;
        }
        if (method.name !== name)
          problems.push(`${where}:${method.line}: ${method.name} differs in case from Handler ${name}`);
        if (method.kind !== "FUNCTION")
          problems.push(`${where}:${method.line}: ${name} must be a Функция returning HTTPСервисОтвет`);
        if (method.params.length !== 1) {
          problems.push(
            `${where}:${method.line}: ${name} must take exactly one parameter (Запрос), has ${method.params.length}`,
          );
        }
        if (method.exported)
          problems.push(`${where}:${method.line}: ${name} should not be Экспорт (handlers are bound by name)`);
        if (method.body.length === 0) problems.push(`${where}:${method.line}: ${name} has an empty body`);
        if (method.regions[0] !== "ОбработчикиСобытий") {
          problems.push(`${where}:${method.line}: ${name} must be in the region ОбработчикиСобытий (ITS #455)`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("answers every result kind the order module produces, and no other", () => {
    const produced = new Set<string>();
    const orders = moduleOf("CommonModule", `${EXPECTED_PREFIX}ОбработкаЗаказов`).lexed.tokens;
    orders.forEach((token, index) => {
      const argument = orders[index + 2];
      if (["новыйрезультат", "результатсошибкой"].includes(token.lower) && argument?.kind === "string") {
        produced.add(argument.text);
      }
    });
    const handled = new Set<string>();
    for (const service of services()) {
      const tokens = moduleOf("HTTPService", service).lexed.tokens;
      tokens.forEach((token, index) => {
        const value = tokens[index + 2];
        if (token.lower === "вид" && tokens[index + 1]?.text === "=" && value?.kind === "string")
          handled.add(value.text);
      });
    }
    expect(produced.size).toBeGreaterThanOrEqual(6);
    expect([...handled].sort()).toEqual([...produced].sort());
  });

  it("uses the contract's error codes, headers and status codes", () => {
    const strings = new Set<string>();
    const numbers = new Set<string>();
    for (const module of modules) {
      for (const token of module.lexed.tokens) {
        if (token.kind === "string") strings.add(token.text);
        if (token.kind === "number") numbers.add(token.text);
      }
    }
    const codes = [
      "BAD_JSON",
      "MISSING_IDEMPOTENCY_KEY",
      "BAD_EVENT",
      "EVENT_ID_REUSED",
      "NOT_FOUND",
      "UNSUPPORTED_MEDIA_TYPE",
      "PAYLOAD_TOO_LARGE",
      "UNAVAILABLE",
      "MAINTENANCE",
      "BAD_IDEMPOTENCY_KEY",
      PROCESSING_ERROR,
      ...REFUSAL_CODES,
    ];
    const headers = ["Content-Type", "X-Correlation-ID", "Idempotency-Key", "Retry-After", "X-Contract-Version"];
    const statuses = ["200", "201", "400", "404", "409", "413", "415", "422", "500", "503"];
    expect(codes.filter((code) => !strings.has(code))).toEqual([]);
    // The contract's own cases name the codes and statuses 1C must answer with: the BSL must know them all.
    const contract = loadContract();
    const contractCodes = contract
      .map((c) => (c.expect.body as Record<string, unknown> | undefined)?.["error.code"])
      .filter((code): code is string => typeof code === "string");
    expect(contractCodes.length).toBeGreaterThan(3);
    expect(contractCodes.filter((code) => !strings.has(code))).toEqual([]);
    const contractStatuses = contract.map((c) => String(c.expect.status));
    expect(contractStatuses.filter((status) => !numbers.has(status))).toEqual([]);
    expect(headers.filter((header) => !strings.has(header))).toEqual([]);
    expect(strings).toContain("application/json; charset=utf-8");
    expect(statuses.filter((status) => !numbers.has(status))).toEqual([]);
  });
});

describe("1c/extension: BSL modules", () => {
  it("blocks are balanced: Процедура, Функция, Если, Для/Пока … Цикл, Попытка, #Область, #Если", () => {
    const problems = modules.flatMap((module) => at(module.file.rel, checkBlocks(module.lexed)));
    expect(problems).toEqual([]);
  });

  it("transactions follow ITS #783 and no Исключение is empty (#499)", () => {
    const problems = modules.flatMap((module) =>
      module.structure.methods.flatMap((method) => at(module.file.rel, checkTransactionShape(method.body))),
    );
    expect(problems).toEqual([]);
    const begins = modules.flatMap((module) =>
      module.structure.methods.flatMap((method) =>
        method.body.filter((item) => isCallStatement(item, ["начатьтранзакцию"])),
      ),
    );
    expect(begins.length, "the shape check must have transactions to look at").toBeGreaterThanOrEqual(2);
  });

  it("exported methods have a doc comment with Параметры and Возвращаемое значение (ITS #453)", () => {
    const problems = modules.flatMap((module) =>
      at(module.file.rel, checkDocComments(module.lexed, module.structure.methods)),
    );
    expect(problems).toEqual([]);
  });

  it("methods sit in the standard regions of their module kind (ITS #455)", () => {
    const programInterface = ["ПрограммныйИнтерфейс", "СлужебныйПрограммныйИнтерфейс"];
    const rules: Record<ModuleKind, RegionRules> = {
      CommonModule: { topLevel: [...programInterface, "СлужебныеПроцедурыИФункции"], exportRegions: programInterface },
      ManagerModule: {
        topLevel: [...programInterface, "ОбработчикиСобытий", "СлужебныеПроцедурыИФункции"],
        exportRegions: programInterface,
      },
      HTTPService: { topLevel: ["ОбработчикиСобытий", "СлужебныеПроцедурыИФункции"] },
      // Exported form methods are notification handlers (ОписаниеОповещения), not an interface: any region.
      FormModule: { topLevel: FORM_MODULE_REGIONS },
    };
    // A form's tables get a region each: ОбработчикиСобытийЭлементовТаблицыФормы<ИмяТаблицы> (ITS #455).
    const tableRegions = (module: BslModule): string[] => {
      const rel = module.file.rel.replace(/\/Ext\/Form\/Module\.bsl$/, "/Ext/Form.xml");
      if (module.kind !== "FormModule" || !files.some((file) => file.rel === rel)) return [];
      return [...walk(xml(rel))]
        .filter(({ element }) => element.name === "Table")
        .map(({ element }) => `ОбработчикиСобытийЭлементовТаблицыФормы${element.attributes.get("name") ?? ""}`);
    };
    const problems = modules.flatMap((module) => {
      const own = rules[module.kind];
      return at(
        module.file.rel,
        checkRegions(module.structure, { ...own, topLevel: [...own.topLevel, ...tableRegions(module)] }),
      );
    });
    expect(problems).toEqual([]);
  });

  it("every call resolves: a method of the module, an exported method of our modules, or a known platform function", () => {
    const exportedOf = new Map<string, Set<string>>();
    for (const module of modules) {
      const qualifier =
        module.kind === "ManagerModule"
          ? `РегистрыСведений.${module.owner}`
          : module.kind === "CommonModule"
            ? module.owner
            : "";
      if (qualifier === "") continue;
      exportedOf.set(
        qualifier.toLowerCase(),
        lowerSet(module.structure.methods.filter((method) => method.exported).map((method) => method.name)),
      );
    }
    const problems: string[] = [];
    for (const module of modules) {
      const local = lowerSet(module.structure.methods.map((method) => method.name));
      const platform =
        module.kind === "ManagerModule"
          ? new Set([...PLATFORM_FUNCTIONS, ...MANAGER_METHODS])
          : module.kind === "FormModule"
            ? new Set([...PLATFORM_FUNCTIONS, ...FORM_FUNCTIONS])
            : PLATFORM_FUNCTIONS;
      for (const call of callsIn(module.lexed.tokens)) {
        const name = call.name.toLowerCase();
        const qualifier = call.qualifier.toLowerCase();
        if (qualifier === "") {
          if (!local.has(name) && !platform.has(name)) {
            problems.push(
              `${module.file.rel}:${call.line}: ${call.name}() is neither a method of this module nor in PLATFORM_FUNCTIONS`,
            );
          }
          continue;
        }
        // Константы.ИнтСайт_X.Получить(): a constant of this extension, read or written through its manager.
        const [collection = "", constant = ""] = call.qualifier.split(".");
        if (["константы", "constants"].includes(collection.toLowerCase())) {
          if (!ownObjects("Constant").includes(constant) || !CONSTANT_METHODS.has(name)) {
            problems.push(
              `${module.file.rel}:${call.line}: ${call.qualifier}.${call.name}() is not a constant of this extension`,
            );
          }
          continue;
        }
        const exported = exportedOf.get(qualifier);
        if (exported !== undefined && !exported.has(name)) {
          problems.push(
            `${module.file.rel}:${call.line}: ${call.qualifier}.${call.name}() is not an exported method there`,
          );
        } else if (
          exported === undefined &&
          call.qualifier.split(".").some((part) => part.startsWith(EXPECTED_PREFIX))
        ) {
          problems.push(`${module.file.rel}:${call.line}: ${call.qualifier} is not a module of this extension`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  const OPERATOR_PRIVILEGED = ["ПовторитьСобытие", "ЗаказПоИдентификатору"];

  it("no Сообщить(), privileged mode only where an operator needs it (ITS #485, the extension runs without safe mode), no outbound HTTP", () => {
    const forbidden = new Set(["сообщить", "message"]);
    const privileged = new Set(["установитьпривилегированныйрежим", "setprivilegedmode"]);
    const problems: string[] = [];
    for (const module of modules) {
      for (const call of callsIn(module.lexed.tokens)) {
        if (forbidden.has(call.name.toLowerCase()))
          problems.push(`${module.file.rel}:${call.line}: ${call.name}() is not allowed`);
      }
      for (const method of module.structure.methods) {
        const calls = method.body.flatMap((item) => (item.type === "stmt" ? callsIn(item.tokens) : []));
        if (!calls.some((call) => privileged.has(call.name.toLowerCase()))) continue;
        // The operator has no rights on the configuration's documents: re-running an event creates one, and the
        // log's order link reads one reference.
        if (module.owner !== `${EXPECTED_PREFIX}ОбработкаЗаказов` || !OPERATOR_PRIVILEGED.includes(method.name))
          problems.push(
            `${module.file.rel}:${method.line}: privileged mode in ${method.name}, only ${OPERATOR_PRIVILEGED.join(", ")} may use it`,
          );
      }
      module.lexed.tokens.forEach((token, index) => {
        const next = module.lexed.tokens[index + 1];
        if (
          token.keyword === "NEW" &&
          next !== undefined &&
          ["httpсоединение", "httpconnection"].includes(next.lower)
        ) {
          problems.push(`${module.file.rel}:${token.line}: outbound HTTP from 1C is not part of this integration`);
        }
      });
    }
    expect(problems).toEqual([]);
  });

  it(`configuration-specific objects are used only in the region ${ADAPTATION_REGION}`, () => {
    const orders = moduleOf("CommonModule", `${EXPECTED_PREFIX}ОбработкаЗаказов`);
    const adaptation = orders.structure.methods.filter((method) => method.regions.includes(ADAPTATION_REGION));
    expect(adaptation.map((method) => method.name)).toContain("СоздатьЗаказКлиента");
    const problems: string[] = [];
    for (const module of modules) {
      for (const method of module.structure.methods) {
        if (module === orders && method.regions.includes(ADAPTATION_REGION)) continue;
        for (const token of configurationReferences(method)) {
          problems.push(`${module.file.rel}:${token.line}: ${token.text} outside the region ${ADAPTATION_REGION}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe("1c/extension: register ИнтСайт_ПринятыеСобытия", () => {
  const registerName = `${EXPECTED_PREFIX}ПринятыеСобытия`;
  const register = (): XmlElement => objectOf(`InformationRegisters/${registerName}.xml`);
  const fields = (kind: string): XmlElement[] => childrenNamed(child(register(), "ChildObjects") ?? register(), kind);

  it("is independent, non-periodical, with managed locks and the event id as a string(300) dimension", () => {
    const properties = child(register(), "Properties");
    expect(child(properties, "WriteMode")?.text).toBe("Independent");
    expect(child(properties, "InformationRegisterPeriodicity")?.text).toBe("Nonperiodical");
    expect(child(properties, "DataLockControlMode")?.text).toBe("Managed");
    const dimensions = fields("Dimension");
    expect(dimensions.map((dimension) => nameOf(dimension))).toEqual(["ИдентификаторСобытия"]);
    const type = path(dimensions[0], "Properties", "Type");
    expect(child(type, "v8:Type")?.text).toBe("xs:string");
    expect(path(type, "v8:StringQualifiers", "v8:Length")?.text).toBe("300");
  });

  it("the key length limit in BSL equals the dimension length", () => {
    const orders = moduleOf("CommonModule", `${EXPECTED_PREFIX}ОбработкаЗаказов`);
    const method = orders.structure.methods.find((candidate) => candidate.name === "МаксимальнаяДлинаКлюча");
    const returned = method?.body.find((item) => item.type === "stmt" && item.tokens[0]?.keyword === "RETURN");
    const value = returned?.type === "stmt" ? returned.tokens[1]?.text : undefined;
    const dimension = fields("Dimension")[0];
    expect(value).toBe(path(dimension, "Properties", "Type", "v8:StringQualifiers", "v8:Length")?.text);
  });

  it("the manager module's record description has exactly the register's dimension and resources", () => {
    const manager = moduleOf("ManagerModule", registerName);
    const method = manager.structure.methods.find((candidate) => candidate.name === "НовоеОписаниеЗаписи");
    const text = (method?.body ?? [])
      .flatMap((item) => (item.type === "stmt" ? item.tokens : []))
      .filter((token) => token.kind === "string")
      .map((token) => token.text)
      .join("");
    const described = text
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name !== "");
    const declared = [...fields("Dimension"), ...fields("Resource")].map((field) => nameOf(field));
    expect(described.sort()).toEqual(declared.sort());
  });
});

describe("1c/extension: register ИнтСайт_КлючиПокупателей", () => {
  const register = (): XmlElement => objectOf(`InformationRegisters/${EXPECTED_PREFIX}КлючиПокупателей.xml`);
  const fields = (kind: string): XmlElement[] => childrenNamed(child(register(), "ChildObjects") ?? register(), kind);
  const typeOf = (field: XmlElement | undefined): string[] =>
    (path(field, "Properties", "Type")?.children ?? []).map((entry) => `${entry.name} ${entry.text.trim()}`);

  it("is independent, non-periodical, with managed locks (the customer key is locked inside the order transaction)", () => {
    const properties = child(register(), "Properties");
    expect(child(properties, "WriteMode")?.text).toBe("Independent");
    expect(child(properties, "InformationRegisterPeriodicity")?.text).toBe("Nonperiodical");
    expect(child(properties, "DataLockControlMode")?.text).toBe("Managed");
  });

  it("keys a customer by a string(300) КлючПокупателя and holds the partner and counterparty created for it", () => {
    const dimensions = fields("Dimension");
    expect(dimensions.map((dimension) => nameOf(dimension))).toEqual(["КлючПокупателя"]);
    const type = path(dimensions[0], "Properties", "Type");
    expect(child(type, "v8:Type")?.text).toBe("xs:string");
    expect(path(type, "v8:StringQualifiers", "v8:Length")?.text).toBe("300");
    const resources = fields("Resource");
    expect(Object.fromEntries(resources.map((resource) => [nameOf(resource), typeOf(resource)]))).toEqual({
      Партнер: ["v8:Type cfg:CatalogRef.Партнеры"],
      Контрагент: ["v8:Type cfg:CatalogRef.Контрагенты"],
    });
    // A reference resource starts empty: Designer writes its FillValue as nil, not as a typed empty string.
    for (const resource of resources) {
      expect(path(resource, "Properties", "FillValue")?.attributes.get("xsi:nil"), nameOf(resource)).toBe("true");
    }
  });

  it("has the seven generated types of an information register", () => {
    const generated = childrenNamed(child(register(), "InternalInfo") ?? register(), "xr:GeneratedType").map((type) =>
      type.attributes.get("category"),
    );
    expect(generated).toEqual(["Record", "Manager", "Selection", "List", "RecordSet", "RecordKey", "RecordManager"]);
  });
});

describe("1c/extension: role and publication", () => {
  it("the role grants rights only on objects of this extension", () => {
    const problems: string[] = [];
    const known = new Set(listedObjects().map((entry) => `${entry.kind}.${entry.name}`));
    for (const { element } of walk(objectOf(`HTTPServices/${ownObjects("HTTPService")[0]}.xml`))) {
      if (element.name !== "URLTemplate") continue;
      for (const method of childrenNamed(child(element, "ChildObjects") ?? element, "Method")) {
        known.add(
          `HTTPService.${ownObjects("HTTPService")[0]}.URLTemplate.${nameOf(element)}.Method.${nameOf(method)}`,
        );
      }
    }
    for (const role of ownObjects("Role")) {
      const rel = `Roles/${role}/Ext/Rights.xml`;
      const rights = xml(rel);
      expect(rights.name, `${rel}: root element`).toBe("Rights");
      for (const object of childrenNamed(rights, "object")) {
        const name = child(object, "name")?.text.trim() ?? "";
        if (!known.has(name)) {
          problems.push(
            `${rel}:${object.line}: ${name} is not an object of this extension (an extension role cannot reach it)`,
          );
        }
        for (const right of childrenNamed(object, "right")) {
          const value = child(right, "value")?.text.trim();
          if (value !== "true" && value !== "false")
            problems.push(`${rel}:${right.line}: right value must be true or false`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("default.vrd.example publishes the extension's HTTP service", () => {
    const text = readFileSync(VRD_FILE, "utf8").replace(/^\uFEFF/, "");
    const result = parseXml(text);
    if (!result.ok)
      throw new Error(`1c/publication/default.vrd.example:${result.problem.line}: ${result.problem.message}`);
    const services = child(result.root, "httpServices");
    expect(result.root.name).toBe("point");
    expect(services?.attributes.get("publishExtensionsByDefault")).toBe("true");
    const service = objectOf(`HTTPServices/${ownObjects("HTTPService")[0]}.xml`);
    const entry = childrenNamed(services ?? result.root, "service").find(
      (candidate) => candidate.attributes.get("name") === nameOf(service),
    );
    expect(entry?.attributes.get("rootUrl")).toBe(path(service, "Properties", "RootURL")?.text);
    expect(entry?.attributes.get("enable")).toBe("true");
  });
});

/** Names of the extended configuration's object managers: only the adaptation region may touch them. */
function configurationReferences(method: MethodInfo): Token[] {
  const managers = new Set([
    "документы",
    "справочники",
    "перечисления",
    "регистрынакопления",
    "планывидовхарактеристик",
    "documents",
    "catalogs",
    "enums",
    "accumulationregisters",
  ]);
  const found: Token[] = [];
  for (const item of method.body) {
    if (item.type !== "stmt") continue;
    item.tokens.forEach((token, index) => {
      const member = item.tokens[index + 2];
      if (token.kind !== "word" || item.tokens[index - 1]?.text === ".") return;
      if (managers.has(token.lower)) found.push(token);
      if (
        (token.lower === "регистрысведений" || token.lower === "informationregisters") &&
        member !== undefined &&
        !member.text.startsWith(EXPECTED_PREFIX)
      ) {
        found.push(token);
      }
    });
    // Object names inside query texts: ИЗ Справочник.Номенклатура
    for (const token of item.tokens) {
      if (
        token.kind === "string" &&
        /(?<![\p{L}\p{N}_])(Справочник|Документ|Перечисление|РегистрНакопления)\./u.test(token.text)
      ) {
        found.push(token);
      }
    }
  }
  return found;
}

/** Global functions of the platform the modules may call (lowercase). Add a name here when a module starts using it. */
const PLATFORM_FUNCTIONS: ReadonlySet<string> = new Set([
  "тип",
  "типзнч",
  "стршаблон",
  "нстр",
  "формат",
  "стрдлина",
  "стрнайти",
  "лев",
  "сред",
  "прав",
  "нрег",
  "врег",
  "сокрлп",
  "сокрл",
  "сокрп",
  "пустаястрока",
  "стрначинаетсяс",
  "стрзаканчиваетсяна",
  "стрразделить",
  "стрсоединить",
  "символ",
  "кодсимвола",
  "строка",
  "число",
  "цел",
  "окр",
  "значениезаполнено",
  "заполнитьзначениясвойств",
  "информацияобошибке",
  "краткоепредставлениеошибки",
  "подробноепредставлениеошибки",
  "записьжурналарегистрации",
  "текущаяуниверсальнаядата",
  "текущаядатасеанса",
  "транзакцияактивна",
  "начатьтранзакцию",
  "зафиксироватьтранзакцию",
  "отменитьтранзакцию",
  "прочитатьjson",
  "записатьjson",
  "получитьстрокуиздвоичныхданных",
  "получитьhexстрокуиздвоичныхданных",
  "раскодироватьстроку",
  "xmlстрока",
  "xmlзначение",
  "получитьсообщенияпользователю",
  "макс",
  "мин",
  "началодня",
  "дата",
  "стрзаменить",
  "местноевремя",
  "часовойпояссеанса",
  "месяц",
  "текущаяуниверсальнаядатавмиллисекундах",
  "безопасныйрежим",
  "привилегированныйрежим",
  "установитьпривилегированныйрежим",
  "праводоступа",
  "рольдоступна",
  "имяпользователя",
  "получитьфункциональнуюопцию",
]);

/** Client-side global functions and methods of the managed form itself, callable unqualified in a form module. */
const FORM_FUNCTIONS: ReadonlySet<string> = new Set([
  "показатьпредупреждение",
  "показатьвопрос",
  "показатьоповещениепользователя",
  "перейтипонавигационнойссылке",
  "подключитьобработчикожидания",
  "отключитьобработчикожидания",
  "получитьнавигационнуюссылку",
  "записать",
  "закрыть",
]);

/** Top-level regions of a form module (ITS #455). */
const FORM_MODULE_REGIONS: readonly string[] = [
  "ОписаниеПеременных",
  "ОбработчикиСобытийФормы",
  "ОбработчикиСобытийЭлементовШапкиФормы",
  "ОбработчикиКомандФормы",
  "СлужебныеПроцедурыИФункции",
];

/** Methods of a constant's manager (Константы.Имя.Получить()). */
const CONSTANT_METHODS: ReadonlySet<string> = new Set(["получить", "установить"]);

/** Methods of an information register manager, callable unqualified in its manager module. */
const MANAGER_METHODS: ReadonlySet<string> = new Set(["создатьменеджерзаписи", "создатьнаборзаписей", "выбрать"]);
