import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { child, parseXml, path, type XmlElement } from "./xml-lite.ts";

/** Paths and helpers shared by the checks of the 1C extension in 1c/extension (Designer XML dump). */

export const ONEC_DIR = fileURLToPath(new URL("../../1c/", import.meta.url));
export const EXTENSION_DIR = join(ONEC_DIR, "extension");
export const SNAPSHOT_FILE = join(ONEC_DIR, "uuids.snapshot.json");
export const VRD_FILE = join(ONEC_DIR, "publication", "default.vrd.example");

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Metadata kind (element name in Configuration.xml) → folder of the dump. */
export const KIND_DIRS: Readonly<Record<string, string>> = {
  Language: "Languages",
  Subsystem: "Subsystems",
  StyleItem: "StyleItems",
  CommonPicture: "CommonPictures",
  SessionParameter: "SessionParameters",
  Role: "Roles",
  CommonTemplate: "CommonTemplates",
  CommonModule: "CommonModules",
  CommonAttribute: "CommonAttributes",
  ExchangePlan: "ExchangePlans",
  XDTOPackage: "XDTOPackages",
  WebService: "WebServices",
  HTTPService: "HTTPServices",
  EventSubscription: "EventSubscriptions",
  ScheduledJob: "ScheduledJobs",
  FunctionalOption: "FunctionalOptions",
  DefinedType: "DefinedTypes",
  CommonCommand: "CommonCommands",
  CommandGroup: "CommandGroups",
  Constant: "Constants",
  CommonForm: "CommonForms",
  Catalog: "Catalogs",
  Document: "Documents",
  DocumentJournal: "DocumentJournals",
  Enum: "Enums",
  Report: "Reports",
  DataProcessor: "DataProcessors",
  InformationRegister: "InformationRegisters",
  AccumulationRegister: "AccumulationRegisters",
  ChartOfCharacteristicTypes: "ChartsOfCharacteristicTypes",
  BusinessProcess: "BusinessProcesses",
  Task: "Tasks",
};

export interface SourceFile {
  /** Path relative to 1c/extension, with "/". */
  readonly rel: string;
  readonly bytes: Buffer;
  /** Decoded text without the BOM. */
  readonly text: string;
}

/** Every file under `dir`, relative paths with "/", sorted. */
export function listFiles(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    const rel = prefix === "" ? name : `${prefix}/${name}`;
    if (statSync(full).isDirectory()) out.push(...listFiles(full, rel));
    else out.push(rel);
  }
  return out;
}

export function readSource(rel: string): SourceFile {
  const bytes = readFileSync(join(EXTENSION_DIR, rel));
  const start = bytes.subarray(0, 3).equals(BOM) ? 3 : 0;
  return { rel, bytes, text: bytes.subarray(start).toString("utf8") };
}

export function extensionFiles(): SourceFile[] {
  return listFiles(EXTENSION_DIR).map(readSource);
}

/** Parses an XML file of the dump or throws with file and line: callers run after the well-formedness test. */
export function parseExtensionXml(file: SourceFile): XmlElement {
  const result = parseXml(file.text);
  if (!result.ok) throw new Error(`${file.rel}:${result.problem.line}: ${result.problem.message}`);
  return result.root;
}

/** The metadata object inside <MetaDataObject>: <Configuration>, <HTTPService>, … */
export function metadataObject(root: XmlElement): XmlElement | undefined {
  return root.name === "MetaDataObject" ? root.children[0] : undefined;
}

export function nameOf(object: XmlElement | undefined): string {
  return path(object, "Properties", "Name")?.text.trim() ?? "";
}

/** An object of the extension that belongs to the extended configuration (Languages/Русский, adopted documents). */
export function isAdopted(object: XmlElement | undefined): boolean {
  return path(object, "Properties", "ObjectBelonging")?.text.trim() === "Adopted";
}

/** First character offset of each line, for file:line messages. */
export function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index && i < text.length; i += 1) if (text[i] === "\n") line += 1;
  return line;
}

export interface UuidEntry {
  /** Stable name of what the UUID identifies, e.g. HTTPService.ИнтСайт_Интеграция.URLTemplate.ЗаказОплачен. */
  readonly key: string;
  readonly uuid: string;
  readonly file: string;
  readonly line: number;
}

/**
 * Every UUID that Designer keeps for the objects of one file: object and child-object uuid
 * attributes, generated type ids, contained object ids, and any other UUID-valued element or
 * attribute (so nothing escapes the snapshot). Platform class ids (xr:ClassId) are constants, not ours.
 * Files inside an object's folder (a register's form, a form's Form.xml) are keyed by their path, so
 * that two registers' ФормаСписка, or the list settings ids of two forms, never share a key.
 */
export function collectUuids(file: string, root: XmlElement): UuidEntry[] {
  const entries: UuidEntry[] = [];
  const scope = file.split("/").length > 2 ? file.replace(/\.xml$/, "") : "";
  const visit = (element: XmlElement, owner: string, parent: string): void => {
    let key = owner;
    const uuid = element.attributes.get("uuid");
    if (uuid !== undefined) {
      const name = nameOf(element) || "?";
      key = owner === "" ? `${element.name}.${name}` : `${owner}.${element.name}.${name}`;
      entries.push({ key, uuid, file, line: element.line });
    }
    for (const [attribute, value] of element.attributes) {
      if (attribute !== "uuid" && UUID.test(value)) {
        entries.push({ key: `${key}#${element.name}@${attribute}`, uuid: value, file, line: element.line });
      }
    }
    if (element.name === "xr:GeneratedType") {
      const category = element.attributes.get("category") ?? "?";
      for (const id of ["xr:TypeId", "xr:ValueId"]) {
        const node = child(element, id);
        if (node !== undefined) {
          entries.push({
            key: `${key}#GeneratedType.${category}.${id.slice(3)}`,
            uuid: node.text.trim(),
            file,
            line: node.line,
          });
        }
      }
      return;
    }
    if (element.name === "xr:ContainedObject") {
      const classId = child(element, "xr:ClassId")?.text.trim() ?? "?";
      const objectId = child(element, "xr:ObjectId");
      if (objectId !== undefined) {
        entries.push({
          key: `${key}#ContainedObject.${classId}`,
          uuid: objectId.text.trim(),
          file,
          line: objectId.line,
        });
      }
      return;
    }
    if (element.children.length === 0 && element.name !== "xr:ClassId" && UUID.test(element.text.trim())) {
      entries.push({
        key: `${key}#${parent}/${element.name}`,
        uuid: element.text.trim(),
        file,
        line: element.line,
      });
    }
    for (const nested of element.children) visit(nested, key, element.name);
  };
  visit(root, scope, "");
  return entries;
}

export interface UuidSnapshot {
  readonly note?: string;
  readonly uuids: Record<string, string>;
}

/**
 * Compares the UUIDs found in the dump with the committed snapshot. A changed UUID turns an
 * object into a different object for 1C (an information register loses its data on update), so
 * every difference is reported.
 */
export function compareWithSnapshot(
  entries: readonly UuidEntry[],
  snapshot: Readonly<Record<string, string>>,
): string[] {
  const problems: string[] = [];
  const current = new Map(entries.map((entry) => [entry.key, entry]));
  const keyByUuid = new Map(entries.map((entry) => [entry.uuid, entry.key]));
  for (const entry of entries) {
    const expected = snapshot[entry.key];
    if (expected === undefined) {
      problems.push(
        `${entry.file}:${entry.line}: ${entry.key} has no entry in 1c/uuids.snapshot.json (uuid ${entry.uuid}). ` +
          "A new object? Record it: ONEC_UUID_SNAPSHOT=update npx vitest run test/onec-extension",
      );
    } else if (expected !== entry.uuid) {
      problems.push(
        `${entry.file}:${entry.line}: UUID of ${entry.key} changed from ${expected} to ${entry.uuid}. ` +
          `1C treats a new UUID as another object (a register loses its data): put ${expected} back`,
      );
    }
  }
  for (const [key, uuid] of Object.entries(snapshot)) {
    if (current.has(key)) continue;
    const movedTo = keyByUuid.get(uuid);
    problems.push(
      movedTo !== undefined
        ? `1c/uuids.snapshot.json: ${key} is now ${movedTo} (same uuid ${uuid}): renamed? Rename the snapshot key`
        : `1c/uuids.snapshot.json: ${key} (uuid ${uuid}) is no longer in the dump. Removed on purpose? Then delete its snapshot entry`,
    );
  }
  return problems;
}

/** The snapshot with entries added for new keys only; existing entries are never rewritten. */
export function withNewEntries(
  entries: readonly UuidEntry[],
  snapshot: Readonly<Record<string, string>>,
): Record<string, string> {
  const merged: Record<string, string> = { ...snapshot };
  for (const entry of entries) if (merged[entry.key] === undefined) merged[entry.key] = entry.uuid;
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
