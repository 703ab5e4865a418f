import type { XmlElement } from "./xml-lite.ts";

/**
 * Facts about Designer dumps that the checks hold the extension to. Sources: public Designer dumps
 * (1c-syntax/ssl_3_1_eng in formats 2.16 and 2.18, 1c-syntax/mdclasses) and the review facts in
 * ../shared/reference/onec.md, "Facts checked against real Designer dumps…".
 */

/** The dump format each platform writes; a platform reads formats up to its own and refuses newer ones. */
export const FORMAT_WRITTEN_BY: Readonly<Record<string, string>> = {
  "8.3.20": "2.13",
  "8.3.22": "2.15",
  "8.3.23": "2.16",
  "8.3.24": "2.17",
  "8.3.25": "2.18",
};

function compareVersions(a: string, b: string): number {
  const left = a.split(".").map(Number);
  const right = b.split(".").map(Number);
  for (let i = 0; i < Math.max(left.length, right.length); i += 1) {
    const diff = (left[i] ?? 0) - (right[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** Problems with a dump of `format` that must load on `platform`; [] when that platform reads it. */
export function formatProblems(format: string, platform: string): string[] {
  const known = Object.keys(FORMAT_WRITTEN_BY)
    .filter((candidate) => compareVersions(candidate, platform) <= 0)
    .sort(compareVersions);
  const newest = known[known.length - 1];
  if (newest === undefined) return [`no known dump format for platform ${platform}`];
  const readable = FORMAT_WRITTEN_BY[newest] ?? "";
  return compareVersions(format, readable) <= 0
    ? []
    : [`format ${format} needs a newer platform than ${platform}, which reads formats up to ${readable}`];
}

/**
 * Property order per object kind, as Designer writes it. A dump may leave some out (older formats
 * have fewer, adopted objects carry few), but what is there comes in this order and nothing else.
 */
const COMMON_FIELD = [
  "Name",
  "Synonym",
  "Comment",
  "Type",
  "PasswordMode",
  "Format",
  "EditFormat",
  "ToolTip",
  "MarkNegatives",
  "Mask",
  "MultiLine",
  "ExtendedEdit",
  "MinValue",
  "MaxValue",
  "FillFromFillingValue",
  "FillValue",
  "FillChecking",
  "ChoiceFoldersAndItems",
  "ChoiceParameterLinks",
  "ChoiceParameters",
  "QuickChoice",
  "CreateOnInput",
  "ChoiceForm",
  "LinkByType",
  "ChoiceHistoryOnInput",
];

export const PROPERTY_ORDER: Readonly<Record<string, readonly string[]>> = {
  // Extension root: spdreg/cc-1c-skills docs/1c-extension-spec.md, checked against mdclasses' extension dump.
  Configuration: [
    "ObjectBelonging",
    "Name",
    "Synonym",
    "Comment",
    "ConfigurationExtensionPurpose",
    "KeepMappingToExtendedConfigurationObjectsByIDs",
    "NamePrefix",
    "ConfigurationExtensionCompatibilityMode",
    "DefaultRunMode",
    "UsePurposes",
    "ScriptVariant",
    "DefaultRoles",
    "Vendor",
    "Version",
    "DefaultLanguage",
    "BriefInformation",
    "DetailedInformation",
    "Copyright",
    "VendorInformationAddress",
    "ConfigurationInformationAddress",
    "InterfaceCompatibilityMode",
  ],
  Language: ["ObjectBelonging", "Name", "Synonym", "Comment", "ExtendedConfigurationObject", "LanguageCode"],
  // Adopted catalog with nothing changed (cc-1c-skills docs/1c-extension-spec.md, format 2.17; mdclasses_ext's
  // adopted Документ1, format 2.9, has the same properties): belonging, name, comment, base object.
  Catalog: ["ObjectBelonging", "Name", "Synonym", "Comment", "ExtendedConfigurationObject"],
  Role: ["Name", "Synonym", "Comment"],
  Subsystem: [
    "Name",
    "Synonym",
    "Comment",
    "IncludeHelpInContents",
    "IncludeInCommandInterface",
    "UseOneCommand",
    "Explanation",
    "Picture",
    "Content",
  ],
  CommonModule: [
    "Name",
    "Synonym",
    "Comment",
    "Global",
    "ClientManagedApplication",
    "Server",
    "ExternalConnection",
    "ClientOrdinaryApplication",
    "ServerCall",
    "Privileged",
    "ReturnValuesReuse",
  ],
  HTTPService: ["Name", "Synonym", "Comment", "RootURL", "ReuseSessions", "SessionMaxAge"],
  // 1c-syntax/ssl_3_1_eng (format 2.16): CommonForms/*.xml and InformationRegisters/*/Forms/*.xml.
  CommonForm: [
    "Name",
    "Synonym",
    "Comment",
    "FormType",
    "IncludeHelpInContents",
    "UsePurposes",
    "UseStandardCommands",
    "ExtendedPresentation",
    "Explanation",
  ],
  Form: ["Name", "Synonym", "Comment", "FormType", "IncludeHelpInContents", "UsePurposes"],
  URLTemplate: ["Name", "Synonym", "Comment", "Template"],
  Method: ["Name", "Synonym", "Comment", "HTTPMethod", "Handler"],
  ScheduledJob: [
    "Name",
    "Synonym",
    "Comment",
    "MethodName",
    "Description",
    "Key",
    "Use",
    "Predefined",
    "RestartCountOnFailure",
    "RestartIntervalOnFailure",
  ],
  Constant: [
    "Name",
    "Synonym",
    "Comment",
    "Type",
    "UseStandardCommands",
    "DefaultForm",
    "ExtendedPresentation",
    "Explanation",
    "PasswordMode",
    "Format",
    "EditFormat",
    "ToolTip",
    "MarkNegatives",
    "Mask",
    "MultiLine",
    "ExtendedEdit",
    "MinValue",
    "MaxValue",
    "FillChecking",
    "ChoiceFoldersAndItems",
    "ChoiceParameterLinks",
    "ChoiceParameters",
    "QuickChoice",
    "ChoiceForm",
    "LinkByType",
    "ChoiceHistoryOnInput",
    "DataLockControlMode",
    "DataHistory",
    "UpdateDataHistoryImmediatelyAfterWrite",
    "ExecuteAfterWriteDataHistoryVersionProcessing",
  ],
  InformationRegister: [
    "Name",
    "Synonym",
    "Comment",
    "UseStandardCommands",
    "EditType",
    "DefaultRecordForm",
    "DefaultListForm",
    "AuxiliaryRecordForm",
    "AuxiliaryListForm",
    "StandardAttributes",
    "InformationRegisterPeriodicity",
    "WriteMode",
    "MainFilterOnPeriod",
    "IncludeHelpInContents",
    "DataLockControlMode",
    "FullTextSearch",
    "EnableTotalsSliceFirst",
    "EnableTotalsSliceLast",
    "RecordPresentation",
    "ExtendedRecordPresentation",
    "ListPresentation",
    "ExtendedListPresentation",
    "Explanation",
    "DataHistory",
    "UpdateDataHistoryImmediatelyAfterWrite",
    "ExecuteAfterWriteDataHistoryVersionProcessing",
  ],
  Resource: [...COMMON_FIELD, "Indexing", "FullTextSearch", "DataHistory"],
  Dimension: [
    ...COMMON_FIELD,
    "Master",
    "MainFilter",
    "DenyIncompleteValues",
    "Indexing",
    "FullTextSearch",
    "DataHistory",
    "TypeReductionMode",
  ],
};

/** Own objects must carry the full property set of their kind, up to what newer formats added. */
export const ADDED_AFTER_2_15: ReadonlySet<string> = new Set(["StandardAttributes", "TypeReductionMode"]);

/** Order problems of one object's <Properties>, "line: message". */
export function propertyOrderProblems(object: XmlElement, complete: boolean): string[] {
  const expected = PROPERTY_ORDER[object.name];
  if (expected === undefined) return [`${object.line}: no known property order for <${object.name}>`];
  const properties = object.children.find((child) => child.name === "Properties")?.children ?? [];
  const problems: string[] = [];
  let cursor = -1;
  for (const property of properties) {
    const at = expected.indexOf(property.name);
    if (at < 0) {
      problems.push(`${property.line}: <${property.name}> is not a property of <${object.name}> in Designer dumps`);
      continue;
    }
    if (at < cursor) {
      problems.push(
        `${property.line}: <${property.name}> comes after <${expected[cursor]}>; Designer writes it before`,
      );
    }
    cursor = Math.max(cursor, at);
  }
  if (complete) {
    const present = new Set(properties.map((property) => property.name));
    for (const name of expected) {
      if (
        !present.has(name) &&
        !ADDED_AFTER_2_15.has(name) &&
        name !== "ObjectBelonging" &&
        name !== "ExtendedConfigurationObject"
      ) {
        problems.push(`${object.line}: <${object.name}> lacks <${name}>`);
      }
    }
  }
  return problems;
}

/** The types Designer generates for a catalog, in the order it writes them. */
export const CATALOG_GENERATED_TYPES: ReadonlyArray<readonly [prefix: string, category: string]> = [
  ["CatalogObject", "Object"],
  ["CatalogRef", "Ref"],
  ["CatalogSelection", "Selection"],
  ["CatalogList", "List"],
  ["CatalogManager", "Manager"],
];

function texts(elements: readonly XmlElement[]): string {
  return elements.length === 0
    ? "nothing"
    : elements.map((element) => `${element.name} ${element.text.trim()}`).join(", ");
}

/**
 * An adopted catalog of an extension that matches adopted objects by name: <ObjectBelonging>Adopted</…>,
 * no base object UUID (it differs between bases), and the catalog's generated types with their ids.
 */
export function adoptedCatalogProblems(object: XmlElement): string[] {
  const problems: string[] = [];
  const name = object.children
    .find((node) => node.name === "Properties")
    ?.children.find((node) => node.name === "Name");
  const catalog = name?.text.trim() ?? "";
  const properties = object.children.find((node) => node.name === "Properties");
  const property = (key: string): XmlElement | undefined => properties?.children.find((node) => node.name === key);
  if (object.name !== "Catalog") problems.push(`${object.line}: <${object.name}>, expected <Catalog>`);
  if (property("ObjectBelonging")?.text.trim() !== "Adopted")
    problems.push(`${object.line}: ${catalog} is not <ObjectBelonging>Adopted</ObjectBelonging>`);
  const base = property("ExtendedConfigurationObject");
  if (base !== undefined)
    problems.push(`${base.line}: ${catalog} names a base object UUID; adopted objects are matched by name here`);
  const generated = (object.children.find((node) => node.name === "InternalInfo")?.children ?? []).filter(
    (node) => node.name === "xr:GeneratedType",
  );
  const found = generated.map((node) => `${node.attributes.get("name")}/${node.attributes.get("category")}`);
  const expected = CATALOG_GENERATED_TYPES.map(([prefix, category]) => `${prefix}.${catalog}/${category}`);
  if (found.join(",") !== expected.join(",")) {
    problems.push(
      `${object.line}: generated types of ${catalog} are [${found.join(", ")}], expected [${expected.join(", ")}]`,
    );
  }
  for (const node of generated) {
    for (const id of ["xr:TypeId", "xr:ValueId"]) {
      if (!node.children.some((candidate) => candidate.name === id && candidate.text.trim() !== ""))
        problems.push(`${node.line}: ${node.attributes.get("name")} has no ${id}`);
    }
  }
  return problems;
}

/** A setting that must hold a reference to exactly one catalog: its <Type> is one <v8:Type>cfg:CatalogRef.X</v8:Type>. */
export function catalogReferenceProblems(object: XmlElement, catalog: string): string[] {
  const properties = object.children.find((node) => node.name === "Properties");
  const type = properties?.children.find((node) => node.name === "Type");
  const entries = type?.children ?? [];
  const expected = `cfg:CatalogRef.${catalog}`;
  const only = entries[0];
  if (entries.length === 1 && only?.name === "v8:Type" && only.text.trim() === expected) return [];
  return [`${type?.line ?? object.line}: the type is ${texts(entries)}; expected exactly v8:Type ${expected}`];
}

/**
 * Reference types written anywhere in a file (v8:Type, v8:TypeSet): each must name an object the extension
 * has (`Catalog.X` for cfg:CatalogRef.X), and none may be «any catalog» (a bare cfg:CatalogRef).
 */
export function referenceTypeProblems(root: XmlElement, known: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const visit = (element: XmlElement): void => {
    if (element.name === "v8:Type" || element.name === "v8:TypeSet") {
      const match = /^cfg:(\w+)Ref(?:\.(.+))?$/u.exec(element.text.trim());
      if (match !== null) {
        const [, kind = "", name] = match;
        if (name === undefined) problems.push(`${element.line}: ${element.text.trim()} accepts any ${kind}`);
        else if (!known.has(`${kind}.${name}`))
          problems.push(`${element.line}: ${element.text.trim()}: ${kind} ${name} is not in the extension (adopt it)`);
      }
    }
    for (const nested of element.children) visit(nested);
  };
  visit(root);
  return problems;
}

/** Rights a Rights.xml grants (value true), by object name. */
export function grantedRights(rights: XmlElement): Map<string, string[]> {
  const granted = new Map<string, string[]>();
  for (const object of rights.children.filter((node) => node.name === "object")) {
    const name = object.children.find((node) => node.name === "name")?.text.trim() ?? "";
    const values = object.children
      .filter((node) => node.name === "right")
      .filter((right) => right.children.find((node) => node.name === "value")?.text.trim() === "true")
      .map((right) => right.children.find((node) => node.name === "name")?.text.trim() ?? "");
    granted.set(name, values);
  }
  return granted;
}

/**
 * The operator's role (a person reading the integration log): it may read and view, nothing else. No right on
 * any constant, none on the settings form, no HTTP method, no Update/Insert/Delete anywhere.
 */
export function operatorRightsProblems(rights: XmlElement, settingsForm: string): string[] {
  const problems: string[] = [];
  for (const object of rights.children.filter((node) => node.name === "object")) {
    const name = object.children.find((node) => node.name === "name")?.text.trim() ?? "";
    const granted = grantedRights({ ...rights, children: [object] }).get(name) ?? [];
    if (name.startsWith("Constant.")) problems.push(`${object.line}: names the setting ${name}`);
    else if (name === settingsForm) problems.push(`${object.line}: names the settings form ${name}`);
    else if (name.startsWith("HTTPService.")) problems.push(`${object.line}: names the HTTP service ${name}`);
    for (const right of granted.filter((candidate) => candidate !== "Read" && candidate !== "View"))
      problems.push(`${object.line}: grants ${right} on ${name}`);
  }
  return problems;
}
