import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REFUSAL_CODES } from "../../src/onec/contract/codes.ts";
import { lexBsl, moduleStructure, type Token } from "./bsl-lite.ts";
import { parseBsl } from "./bsl-parser/parser.ts";
import {
  collectUuids,
  extensionFiles,
  isAdopted,
  listFiles,
  metadataObject,
  nameOf,
  ONEC_DIR,
  type SourceFile,
  UUID,
} from "./extension-tree.ts";
import { parseXml, path, type XmlElement } from "./xml-lite.ts";

/**
 * The YAxUnit test set in 1c/tests (a second configuration extension, ИнтеграцияССайтомТесты) cannot
 * run here: these checks hold it to what 1C and YAxUnit need before it reaches a base. The files are a
 * Designer dump (BOM, CRLF, well-formed XML, format 2.15, UUIDs of its own); every module parses with
 * our BSL parser; every test a module registers in ИсполняемыеСценарии exists as an exported procedure
 * taking as many parameters as СПараметрами passes; every case of 1c/contract/cases.json has a test of
 * that name in ИнтСайтТест_Контракт; every setup of issue 20 (setup-1 … setup-6) has a suite in
 * ИнтСайтТест_Настройки; and every call into the tested extension names an exported method, constant or
 * register that 1c/extension has; every refusal code of the contract is checked by a test in a base, or
 * 1c/tests/README.md says why not and how an administrator checks it by hand. Each check is also fed a
 * broken copy and must fail.
 */

const TESTS_DIR = join(ONEC_DIR, "tests");
const CASES_FILE = join(ONEC_DIR, "contract", "cases.json");
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const PREFIX = "ИнтСайтТест_";
const CONTRACT_MODULE = "ИнтСайтТест_Контракт";
const SETUPS_MODULE = "ИнтСайтТест_Настройки";
const SETUP_TAGS = ["setup-1", "setup-2", "setup-3", "setup-4", "setup-5", "setup-6"];
/** YAxUnit calls these module procedures by name when they exist; they take no parameters. */
const EVENT_HANDLERS = [
  "ПередВсемиТестами",
  "ПередТестовымНабором",
  "ПередКаждымТестом",
  "ПослеКаждогоТеста",
  "ПослеТестовогоНабора",
  "ПослеВсехТестов",
];

function readTestFile(rel: string): SourceFile {
  const bytes = readFileSync(join(TESTS_DIR, rel));
  const start = bytes.subarray(0, 3).equals(BOM) ? 3 : 0;
  return { rel, bytes, text: bytes.subarray(start).toString("utf8") };
}

const files = listFiles(TESTS_DIR).map(readTestFile);
const dumpFiles = files.filter((file) => file.rel.endsWith(".xml") || file.rel.endsWith(".bsl"));
const xmlFiles = files.filter((file) => file.rel.endsWith(".xml"));
const bslFiles = files.filter((file) => file.rel.endsWith(".bsl"));

function root(file: SourceFile): XmlElement {
  const result = parseXml(file.text);
  if (!result.ok) throw new Error(`${file.rel}:${result.problem.line}: ${result.problem.message}`);
  return result.root;
}

function moduleText(name: string): string {
  const file = bslFiles.find((candidate) => candidate.rel === `CommonModules/${name}/Ext/Module.bsl`);
  if (file === undefined) throw new Error(`1c/tests has no module ${name}`);
  return file.text;
}

// ---------------------------------------------------------------------------------------------
// Checks, each a function of its subject so that a broken subject can be fed to it.

/** Designer writes UTF-8 with a BOM and CRLF line ends; a file saved otherwise is refused or rewritten. */
function encodingProblems(file: SourceFile): string[] {
  const problems: string[] = [];
  if (!file.bytes.subarray(0, 3).equals(BOM)) problems.push(`${file.rel}: no UTF-8 BOM`);
  const text = file.bytes.toString("utf8");
  const bareLf = text.replace(/\r\n/g, "").indexOf("\n");
  if (bareLf >= 0 || /\r(?!\n)/.test(text)) problems.push(`${file.rel}: line ends are not all CRLF`);
  if (text.includes("\uFFFD")) problems.push(`${file.rel}: not valid UTF-8`);
  return problems;
}

/** Well-formed XML of a 2.15 dump. */
function xmlProblems(file: SourceFile): string[] {
  const result = parseXml(file.text);
  if (!result.ok) return [`${file.rel}:${result.problem.line}: ${result.problem.message}`];
  if (result.root.name !== "MetaDataObject")
    return [`${file.rel}: root is <${result.root.name}>, not <MetaDataObject>`];
  const version = result.root.attributes.get("version");
  return version === "2.15" ? [] : [`${file.rel}: format ${version ?? "(none)"}, not 2.15 like 1c/extension`];
}

/** UUIDs unique within the test extension and none shared with 1c/extension (another object to 1C). */
function uuidProblems(tests: readonly SourceFile[], extension: readonly SourceFile[]): string[] {
  const problems: string[] = [];
  const extensionUuids = new Set(
    extension
      .filter((file) => file.rel.endsWith(".xml"))
      .flatMap((file) => collectUuids(file.rel, root(file)).map((entry) => entry.uuid)),
  );
  const seen = new Map<string, string>();
  for (const file of tests.filter((candidate) => candidate.rel.endsWith(".xml"))) {
    for (const entry of collectUuids(file.rel, root(file))) {
      if (!UUID.test(entry.uuid)) problems.push(`${entry.file}:${entry.line}: ${entry.uuid} is not a lower-case UUID`);
      const first = seen.get(entry.uuid);
      if (first !== undefined) problems.push(`${entry.file}:${entry.line}: ${entry.uuid} also at ${first}`);
      else seen.set(entry.uuid, `${entry.file}:${entry.line}`);
      if (extensionUuids.has(entry.uuid))
        problems.push(`${entry.file}:${entry.line}: ${entry.uuid} is a UUID of 1c/extension`);
    }
  }
  return problems;
}

/** The test extension's Configuration.xml: its own name and prefix, AddOn, Русский adopted by name, and its object list = its files. */
function configurationProblems(configuration: XmlElement, relFiles: readonly string[]): string[] {
  const problems: string[] = [];
  const object = metadataObject(configuration);
  const property = (name: string): string => path(object, "Properties", name)?.text.trim() ?? "";
  if (nameOf(object) !== "ИнтеграцияССайтомТесты")
    problems.push(`Name is "${nameOf(object)}", not ИнтеграцияССайтомТесты`);
  if (property("NamePrefix") !== PREFIX) problems.push(`NamePrefix is "${property("NamePrefix")}", not ${PREFIX}`);
  if (property("ConfigurationExtensionPurpose") !== "AddOn")
    problems.push("ConfigurationExtensionPurpose is not AddOn");
  if (property("KeepMappingToExtendedConfigurationObjectsByIDs") !== "false") {
    problems.push("KeepMappingToExtendedConfigurationObjectsByIDs must be false: the language is adopted by name");
  }
  if (property("DefaultLanguage") !== "Language.Русский") problems.push("DefaultLanguage is not Language.Русский");
  const children = path(object, "ChildObjects")?.children ?? [];
  const listed = new Set(children.map((element) => `${element.name}:${element.text.trim()}`));
  if (!listed.has("Language:Русский")) problems.push("ChildObjects has no Language Русский");
  for (const element of children) {
    const folder = element.name === "Language" ? "Languages" : element.name === "CommonModule" ? "CommonModules" : "";
    const name = element.text.trim();
    if (folder === "") problems.push(`ChildObjects: ${element.name} ${name} is not expected in a test extension`);
    else if (!relFiles.includes(`${folder}/${name}.xml`))
      problems.push(`ChildObjects: ${folder}/${name}.xml is missing`);
    if (element.name === "CommonModule" && !name.startsWith(PREFIX))
      problems.push(`${name} lacks the prefix ${PREFIX}`);
  }
  for (const rel of relFiles) {
    const match = /^(Languages|CommonModules)\/([^/]+)\.xml$/.exec(rel);
    if (match === null) continue;
    const kind = match[1] === "Languages" ? "Language" : "CommonModule";
    if (!listed.has(`${kind}:${match[2]}`)) problems.push(`${rel} is not listed in Configuration.xml`);
  }
  return problems;
}

/** A common module of the test extension: server-side, its own (not adopted), with its Module.bsl. */
function commonModuleProblems(file: SourceFile, relFiles: readonly string[]): string[] {
  const object = metadataObject(root(file));
  const name = nameOf(object);
  const problems: string[] = [];
  if (`CommonModules/${name}.xml` !== file.rel) problems.push(`${file.rel}: Name is ${name}`);
  if (isAdopted(object)) problems.push(`${file.rel}: a test module must be the extension's own, not adopted`);
  if (path(object, "Properties", "Server")?.text.trim() !== "true") problems.push(`${file.rel}: Server is not true`);
  if (path(object, "Properties", "Global")?.text.trim() !== "false") problems.push(`${file.rel}: Global is not false`);
  if (!relFiles.includes(`CommonModules/${name}/Ext/Module.bsl`)) problems.push(`${file.rel}: no Ext/Module.bsl`);
  return problems;
}

interface Registration {
  readonly suite: string;
  readonly suiteTags: string;
  readonly method: string;
  readonly presentation: string;
  /** Argument counts of each СПараметрами(…) chained to the test; empty when the test takes none. */
  readonly parameterSets: number[];
  readonly line: number;
}

/** Top-level argument ranges of the call whose "(" is at `open`; returns the index after ")". */
function argumentsAt(tokens: readonly Token[], open: number): { args: Token[][]; end: number } {
  const args: Token[][] = [[]];
  let depth = 0;
  for (let i = open; i < tokens.length; i += 1) {
    const token = tokens[i] as Token;
    if (token.text === "(" || token.text === "[") {
      depth += 1;
      if (depth === 1) continue;
    } else if (token.text === ")" || token.text === "]") {
      depth -= 1;
      if (depth === 0) return { args: args.length === 1 && args[0]?.length === 0 ? [] : args, end: i + 1 };
    } else if (token.text === "," && depth === 1) {
      args.push([]);
      continue;
    }
    args[args.length - 1]?.push(token);
  }
  return { args, end: tokens.length };
}

function stringArgument(arg: Token[] | undefined): string {
  return arg?.length === 1 && arg[0]?.kind === "string" ? arg[0].text : "";
}

/** The suites and tests registered in ИсполняемыеСценарии through YAxUnit's ЮТТесты chain. */
function registrations(text: string): Registration[] {
  const lexed = lexBsl(text);
  const method = moduleStructure(lexed).methods.find((candidate) => candidate.name === "ИсполняемыеСценарии");
  if (method === undefined) return [];
  const tokens = method.body.flatMap((item) => (item.type === "stmt" ? item.tokens : []));
  const found: Registration[] = [];
  let suite = "";
  let suiteTags = "";
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as Token;
    if (token.kind !== "word" || tokens[i - 1]?.text !== "." || tokens[i + 1]?.text !== "(") continue;
    const { args } = argumentsAt(tokens, i + 1);
    if (token.lower === "добавитьтестовыйнабор") {
      suite = stringArgument(args[0]);
      suiteTags = stringArgument(args[1]);
    } else if (token.lower === "добавитьтест" || token.lower === "добавитьсерверныйтест") {
      found.push({
        suite,
        suiteTags,
        method: stringArgument(args[0]),
        presentation: stringArgument(args[1]),
        parameterSets: [],
        line: token.line,
      });
    } else if (token.lower === "спараметрами") {
      found[found.length - 1]?.parameterSets.push(args.length);
    }
  }
  return found;
}

/** ИсполняемыеСценарии is there and exported; each registered test is an exported procedure with the parameters СПараметрами passes. */
function registrationProblems(moduleName: string, text: string): string[] {
  const problems: string[] = [];
  const methods = moduleStructure(lexBsl(text)).methods;
  const byName = new Map(methods.map((method) => [method.name.toLowerCase(), method]));
  const scenarios = byName.get("исполняемыесценарии");
  if (scenarios === undefined || !scenarios.exported || scenarios.kind !== "PROCEDURE" || scenarios.params.length > 0) {
    return [`${moduleName}: no exported Процедура ИсполняемыеСценарии() without parameters`];
  }
  const registered = registrations(text);
  if (registered.length === 0) problems.push(`${moduleName}: ИсполняемыеСценарии registers no test`);
  for (const registration of registered) {
    const where = `${moduleName}:${registration.line}`;
    if (registration.method === "") {
      problems.push(`${where}: ДобавитьТест without a method name string`);
      continue;
    }
    const method = byName.get(registration.method.toLowerCase());
    if (method === undefined) {
      problems.push(`${where}: test ${registration.method} is registered but there is no such method`);
      continue;
    }
    if (!method.exported) problems.push(`${where}: test ${registration.method} is not exported (Экспорт)`);
    if (method.kind !== "PROCEDURE")
      problems.push(`${where}: test ${registration.method} is a Функция, not a Процедура`);
    const expected = registration.parameterSets.length === 0 ? [0] : registration.parameterSets;
    for (const count of expected) {
      if (count !== method.params.length) {
        problems.push(
          `${where}: test ${registration.method} takes ${method.params.length} parameters, registered with ${count}`,
        );
      }
    }
  }
  for (const handler of EVENT_HANDLERS) {
    const method = byName.get(handler.toLowerCase());
    if (method !== undefined && (!method.exported || method.params.length > 0)) {
      problems.push(`${moduleName}: ${handler} must be an exported procedure without parameters, or YAxUnit skips it`);
    }
  }
  return problems;
}

/** Every contract case has a test whose presentation is the case's name, and no test names a case that is gone. */
function contractCoverageProblems(text: string, caseNames: readonly string[]): string[] {
  const presentations = new Set(registrations(text).map((registration) => registration.presentation));
  const problems = caseNames
    .filter((name) => !presentations.has(name))
    .map((name) => `${CONTRACT_MODULE}: no test for contract case "${name}"`);
  for (const presentation of presentations) {
    if (!caseNames.includes(presentation))
      problems.push(`${CONTRACT_MODULE}: test "${presentation}" names no case of cases.json`);
  }
  return problems;
}

/** Every setup of issue 20 has a suite tagged setup-N with at least one test. */
function setupCoverageProblems(text: string): string[] {
  const registered = registrations(text);
  return SETUP_TAGS.filter(
    (tag) =>
      !registered.some((registration) =>
        registration.suiteTags
          .split(",")
          .map((t) => t.trim())
          .includes(tag),
      ),
  ).map((tag) => `${SETUPS_MODULE}: no test in a suite tagged ${tag}`);
}

const README_FILE = join(TESTS_DIR, "README.md");
const NOT_STAGED_HEADING = "## Отказы, которые набор не ставит в базе";

/** Codes a test checks a refusal by: the string arguments of ПроверитьОтказ and ПроверитьОтветОшибку. */
function checkedRefusalCodes(texts: readonly string[]): Set<string> {
  const codes = new Set<string>();
  for (const text of texts) {
    for (const call of text.matchAll(/(?:ПроверитьОтказ|ПроверитьОтветОшибку)\(([^;]*?)\);/g)) {
      for (const literal of (call[1] ?? "").matchAll(/"([A-Z][A-Z0-9_]+)"/g)) codes.add(literal[1] ?? "");
    }
  }
  return codes;
}

/** Codes the README's section on refusals the set does not stage lists, each as "- `CODE` — why". */
function notStagedCodes(readme: string): Set<string> {
  const start = readme.indexOf(NOT_STAGED_HEADING);
  if (start < 0) return new Set();
  const section = readme.slice(start + NOT_STAGED_HEADING.length).split(/\n## /)[0] ?? "";
  return new Set([...section.matchAll(/^- `([A-Z][A-Z0-9_]+)` — /gm)].map((match) => match[1] ?? ""));
}

/** Every refusal code checked in a base or explained; none both (the README would then be stale). */
function refusalCoverageProblems(texts: readonly string[], readme: string): string[] {
  const checked = checkedRefusalCodes(texts);
  const explained = notStagedCodes(readme);
  return REFUSAL_CODES.flatMap((code) => {
    if (checked.has(code) && explained.has(code)) {
      return [`${code}: a test checks it, yet 1c/tests/README.md lists it as not staged`];
    }
    if (!checked.has(code) && !explained.has(code)) {
      return [`${code}: no test checks it in a base, and 1c/tests/README.md does not say why`];
    }
    return [];
  });
}

interface Target {
  readonly exported: Map<string, Set<string>>;
  readonly constants: Set<string>;
  readonly registers: Set<string>;
}

/** Exported methods of the tested and the test modules, and the constants and registers of 1c/extension. */
function targets(extension: readonly SourceFile[], tests: readonly SourceFile[]): Target {
  const exported = new Map<string, Set<string>>();
  for (const file of [...extension, ...tests]) {
    const match = /^CommonModules\/([^/]+)\/Ext\/Module\.bsl$/.exec(file.rel);
    if (match === null) continue;
    const methods = moduleStructure(lexBsl(file.text)).methods.filter((method) => method.exported);
    exported.set((match[1] as string).toLowerCase(), new Set(methods.map((method) => method.name.toLowerCase())));
  }
  const names = (folder: string): Set<string> =>
    new Set(
      extension
        .map((file) => new RegExp(`^${folder}/([^/]+)\\.xml$`).exec(file.rel)?.[1])
        .filter((name): name is string => name !== undefined)
        .map((name) => name.toLowerCase()),
    );
  return { exported, constants: names("Constants"), registers: names("InformationRegisters") };
}

/**
 * Calls into the extension under test (ИнтСайт_…) and into the test modules name exported methods that
 * exist; Константы.ИнтСайт_… and РегистрыСведений.ИнтСайт_… name objects of 1c/extension; the settings
 * a test sets (УстановитьНастройку("X", …)) are constants ИнтСайт_X. A renamed function in the main
 * module shows up here, not as a runtime error in a base.
 */
function referenceProblems(moduleName: string, text: string, target: Target): string[] {
  const problems: string[] = [];
  const tokens = lexBsl(text).tokens;
  tokens.forEach((token, i) => {
    if (token.kind !== "word" || tokens[i + 1]?.text !== "." || tokens[i - 1]?.text === ".") return;
    const member = tokens[i + 2];
    if (member === undefined || member.kind !== "word") return;
    const where = `${moduleName}:${token.line}`;
    const module = target.exported.get(token.lower);
    if (module !== undefined && (token.text.startsWith("ИнтСайт_") || token.text.startsWith(PREFIX))) {
      if (!module.has(member.lower)) problems.push(`${where}: ${token.text}.${member.text} is not an exported method`);
    } else if (token.text.startsWith("ИнтСайт_") || token.text.startsWith(PREFIX)) {
      problems.push(`${where}: ${token.text} is not a common module of 1c/extension or 1c/tests`);
    } else if (
      token.lower === "константы" &&
      member.text.startsWith("ИнтСайт_") &&
      !target.constants.has(member.lower)
    ) {
      problems.push(`${where}: constant ${member.text} is not in 1c/extension`);
    } else if (
      token.lower === "регистрысведений" &&
      member.text.startsWith("ИнтСайт_") &&
      !target.registers.has(member.lower)
    ) {
      problems.push(`${where}: register ${member.text} is not in 1c/extension`);
    }
  });
  tokens.forEach((token, i) => {
    if (token.lower !== "установитьнастройку" || tokens[i + 1]?.text !== "(" || tokens[i - 1]?.keyword !== undefined)
      return;
    const name = tokens[i + 2];
    if (name?.kind === "string" && !target.constants.has(`интсайт_${name.text.toLowerCase()}`)) {
      problems.push(
        `${moduleName}:${token.line}: setting ${name.text} is no constant ИнтСайт_${name.text} of 1c/extension`,
      );
    }
  });
  return problems;
}

function caseNames(): string[] {
  const contract = JSON.parse(readFileSync(CASES_FILE, "utf8")) as { cases: Array<{ name: string }> };
  return contract.cases.map((entry) => entry.name);
}

// ---------------------------------------------------------------------------------------------

const extension = extensionFiles();
const relFiles = files.map((file) => file.rel);
const modules = xmlFiles.filter((file) => /^CommonModules\/[^/]+\.xml$/.test(file.rel));
const moduleNames = modules.map((file) => file.rel.replace(/^CommonModules\/|\.xml$/g, ""));

describe("YAxUnit test set 1c/tests: the Designer dump", () => {
  it("has the configuration, the language and three test modules", () => {
    expect(relFiles).toContain("Configuration.xml");
    expect(relFiles).toContain("Languages/Русский.xml");
    expect(moduleNames.sort()).toEqual([CONTRACT_MODULE, SETUPS_MODULE, "ИнтСайтТест_Общий"].sort());
  });

  it("writes every .xml and .bsl as UTF-8 with BOM and CRLF", () => {
    expect(dumpFiles.flatMap(encodingProblems)).toEqual([]);
  });

  it("has well-formed XML of format 2.15", () => {
    expect(xmlFiles.flatMap(xmlProblems)).toEqual([]);
  });

  it("is an AddOn extension of its own name and prefix, the language adopted by name, its object list = its files", () => {
    const configuration = xmlFiles.find((file) => file.rel === "Configuration.xml") as SourceFile;
    expect(configurationProblems(root(configuration), relFiles)).toEqual([]);
    const language = metadataObject(root(xmlFiles.find((file) => file.rel === "Languages/Русский.xml") as SourceFile));
    expect(isAdopted(language)).toBe(true);
    expect(modules.flatMap((file) => commonModuleProblems(file, relFiles))).toEqual([]);
  });

  it("has UUIDs unique within it and none of 1c/extension's", () => {
    expect(uuidProblems(files, extension)).toEqual([]);
  });
});

describe("YAxUnit test set 1c/tests: the modules", () => {
  it("parses every module with the project's BSL parser", () => {
    expect(bslFiles.length).toBe(moduleNames.length);
    const problems = bslFiles.flatMap((file) => {
      const result = parseBsl(file.text);
      return result.ok ? [] : [`1c/tests/${file.rel}:${result.problem.line}: ${result.problem.message}`];
    });
    expect(problems).toEqual([]);
  });

  it("registers in ИсполняемыеСценарии only tests that exist as exported procedures with matching parameters", () => {
    expect(moduleNames.flatMap((name) => registrationProblems(name, moduleText(name)))).toEqual([]);
  });

  it("covers every case of 1c/contract/cases.json with a test named after it", () => {
    expect(caseNames().length).toBeGreaterThanOrEqual(14);
    expect(contractCoverageProblems(moduleText(CONTRACT_MODULE), caseNames())).toEqual([]);
  });

  it("covers every setup of issue 20 (items 1-6) with a tagged suite", () => {
    expect(setupCoverageProblems(moduleText(SETUPS_MODULE))).toEqual([]);
  });

  it("calls only exported methods, constants and registers that 1c/extension and 1c/tests have", () => {
    const target = targets(extension, files);
    expect(moduleNames.flatMap((name) => referenceProblems(name, moduleText(name), target))).toEqual([]);
  });

  it("checks every refusal code of the contract in a base, or its README says why not and how to check it", () => {
    const texts = moduleNames.map(moduleText);
    expect(refusalCoverageProblems(texts, readFileSync(README_FILE, "utf8"))).toEqual([]);
    expect(checkedRefusalCodes(texts).size).toBeGreaterThanOrEqual(REFUSAL_CODES.length - 3);
  });
});

describe("YAxUnit test set 1c/tests: each check fails on a broken subject", () => {
  const contract = moduleText(CONTRACT_MODULE);
  const setups = moduleText(SETUPS_MODULE);

  it("a file without BOM, or with LF line ends", () => {
    const file = dumpFiles[0] as SourceFile;
    const noBom: SourceFile = { ...file, bytes: file.bytes.subarray(3) };
    expect(encodingProblems(noBom)).toEqual([`${file.rel}: no UTF-8 BOM`]);
    const lf: SourceFile = { ...file, bytes: Buffer.from(file.bytes.toString("utf8").replace(/\r\n/g, "\n")) };
    expect(encodingProblems(lf)).toEqual([`${file.rel}: line ends are not all CRLF`]);
  });

  it("XML cut short, or of another format", () => {
    const file = xmlFiles.find((candidate) => candidate.rel === "Configuration.xml") as SourceFile;
    expect(xmlProblems({ ...file, text: file.text.replace("</Configuration>", "") })[0]).toMatch(
      /^Configuration\.xml:\d+: /,
    );
    expect(xmlProblems({ ...file, text: file.text.replace('version="2.15"', 'version="2.18"') })).toEqual([
      "Configuration.xml: format 2.18, not 2.15 like 1c/extension",
    ]);
  });

  it("a configuration named like the tested extension, or listing a module with no file", () => {
    const file = xmlFiles.find((candidate) => candidate.rel === "Configuration.xml") as SourceFile;
    const renamed = file.text.replace("<Name>ИнтеграцияССайтомТесты</Name>", "<Name>ИнтеграцияССайтом</Name>");
    expect(configurationProblems(root({ ...file, text: renamed }), relFiles)).toEqual([
      'Name is "ИнтеграцияССайтом", not ИнтеграцияССайтомТесты',
    ]);
    const extra = file.text.replace(
      "<CommonModule>ИнтСайтТест_Общий</CommonModule>",
      "<CommonModule>ИнтСайтТест_Общий</CommonModule><CommonModule>ИнтСайтТест_Нет</CommonModule>",
    );
    expect(configurationProblems(root({ ...file, text: extra }), relFiles)).toEqual([
      "ChildObjects: CommonModules/ИнтСайтТест_Нет.xml is missing",
    ]);
    const dropped = file.text.replace("<CommonModule>ИнтСайтТест_Общий</CommonModule>", "");
    expect(configurationProblems(root({ ...file, text: dropped }), relFiles)).toEqual([
      "CommonModules/ИнтСайтТест_Общий.xml is not listed in Configuration.xml",
    ]);
  });

  it("a UUID repeated, or taken from 1c/extension", () => {
    const file = modules[0] as SourceFile;
    const own = /uuid="([0-9a-f-]{36})"/.exec(file.text)?.[1] as string;
    const other = modules[1] as SourceFile;
    const copied: SourceFile = { ...other, text: other.text.replace(/uuid="[0-9a-f-]{36}"/, `uuid="${own}"`) };
    expect(uuidProblems([file, copied], extension)).toEqual([expect.stringContaining(`${own} also at ${file.rel}`)]);
    const theirs = /uuid="([0-9a-f-]{36})"/.exec(
      (extension.find((candidate) => candidate.rel === "Configuration.xml") as SourceFile).text,
    )?.[1] as string;
    const stolen: SourceFile = { ...file, text: file.text.replace(own, theirs) };
    expect(uuidProblems([stolen], extension)).toEqual([expect.stringContaining("is a UUID of 1c/extension")]);
  });

  it("a module that no longer parses", () => {
    const broken = contract.replace("КонецПроцедуры", "");
    expect(parseBsl(broken).ok).toBe(false);
  });

  it("a registered test whose procedure is gone, not exported, or takes other parameters", () => {
    const gone = contract.replace("Процедура ПерваяДоставкаСоздаетЗаказ() Экспорт", "Процедура ДругоеИмя() Экспорт");
    expect(registrationProblems(CONTRACT_MODULE, gone)).toEqual([
      expect.stringMatching(/test ПерваяДоставкаСоздаетЗаказ is registered but there is no such method$/),
    ]);
    const hidden = contract.replace(
      "Процедура ПерваяДоставкаСоздаетЗаказ() Экспорт",
      "Процедура ПерваяДоставкаСоздаетЗаказ()",
    );
    expect(registrationProblems(CONTRACT_MODULE, hidden)).toEqual([
      expect.stringMatching(/test ПерваяДоставкаСоздаетЗаказ is not exported/),
    ]);
    const params = contract.replace(
      "Процедура ДатаЗаПределамиДатыПлатформы(Путь) Экспорт",
      "Процедура ДатаЗаПределамиДатыПлатформы() Экспорт",
    );
    expect(registrationProblems(CONTRACT_MODULE, params)).toHaveLength(3);
    const noScenarios = contract.replace("Процедура ИсполняемыеСценарии() Экспорт", "Процедура ИсполняемыеСценарии()");
    expect(registrationProblems(CONTRACT_MODULE, noScenarios)).toEqual([
      `${CONTRACT_MODULE}: no exported Процедура ИсполняемыеСценарии() without parameters`,
    ]);
    const handler = contract.replace("Процедура ПослеКаждогоТеста() Экспорт", "Процедура ПослеКаждогоТеста()");
    expect(registrationProblems(CONTRACT_MODULE, handler)).toEqual([
      expect.stringContaining("ПослеКаждогоТеста must be"),
    ]);
  });

  it("a contract case without a test, and a test naming a case that is gone", () => {
    const names = caseNames();
    const missing = contract.replace('"first-delivery")', '"first-delivery-renamed")');
    expect(contractCoverageProblems(missing, names)).toEqual([
      `${CONTRACT_MODULE}: no test for contract case "first-delivery"`,
      `${CONTRACT_MODULE}: test "first-delivery-renamed" names no case of cases.json`,
    ]);
    expect(contractCoverageProblems(contract, [...names, "new-case"])).toEqual([
      `${CONTRACT_MODULE}: no test for contract case "new-case"`,
    ]);
  });

  it("a refusal code no test checks and the README does not explain, or one it explains that a test checks", () => {
    const texts = moduleNames.map(moduleText);
    const readme = readFileSync(README_FILE, "utf8");
    const untested = texts.map((text) => text.replaceAll('"AMBIGUOUS_SKU"', '"OTHER_CODE"'));
    expect(refusalCoverageProblems(untested, readme)).toEqual([
      "AMBIGUOUS_SKU: no test checks it in a base, and 1c/tests/README.md does not say why",
    ]);
    const stale = readme.replace("- `PERIOD_CLOSED` — ", "- `UNKNOWN_SKU` — ");
    expect(refusalCoverageProblems(texts, stale)).toEqual([
      "UNKNOWN_SKU: a test checks it, yet 1c/tests/README.md lists it as not staged",
      "PERIOD_CLOSED: no test checks it in a base, and 1c/tests/README.md does not say why",
    ]);
  });

  it("a setup whose suite is gone", () => {
    expect(setupCoverageProblems(setups.replace('"setup-4"', '"setup-x"'))).toEqual([
      `${SETUPS_MODULE}: no test in a suite tagged setup-4`,
    ]);
  });

  it("a call to a method, constant, register or setting the extension does not have", () => {
    const target = targets(extension, files);
    const renamed = contract.replace(
      'ИнтСайт_ОбработкаЗаказов.КлючИдемпотентностиКорректен("")',
      'ИнтСайт_ОбработкаЗаказов.КлючКорректен("")',
    );
    expect(referenceProblems(CONTRACT_MODULE, renamed, target)).toEqual([
      expect.stringContaining("ИнтСайт_ОбработкаЗаказов.КлючКорректен is not an exported method"),
    ]);
    const constant = setups.replace("Константы.ИнтСайт_НоменклатураДоставки", "Константы.ИнтСайт_Доставка");
    expect(referenceProblems(SETUPS_MODULE, constant, target)).toEqual([
      expect.stringContaining("constant ИнтСайт_Доставка is not in 1c/extension"),
    ]);
    const register = setups.replace("РегистрыСведений.ИнтСайт_КлючиПокупателей", "РегистрыСведений.ИнтСайт_Покупатели");
    expect(referenceProblems(SETUPS_MODULE, register, target)).toEqual([
      expect.stringContaining("register ИнтСайт_Покупатели is not in 1c/extension"),
    ]);
    const setting = setups.replace(
      'УстановитьНастройку("РежимПокупателя", "Розничный")',
      'УстановитьНастройку("Режим", "Розничный")',
    );
    expect(referenceProblems(SETUPS_MODULE, setting, target)).toEqual([
      expect.stringContaining("setting Режим is no constant ИнтСайт_Режим"),
    ]);
  });
});
