import { readFileSync } from "node:fs";
import { packageFile } from "../../util/package-files.ts";
import { setPath } from "./json-path.ts";

/**
 * The 1C contract as data: 1c/contract/cases.json, described in
 * 1c/contract/README.md. This module reads and checks the file; nothing here
 * talks to a server or fills in templates.
 */

/** Where the shipped contract lives: 1c/contract/ in the package. */
export const CONTRACT_DIR = packageFile("1c/contract/");
export const CASES_FILE = "cases.json";

/** A request body, already built from the file: JSON still holding `{{…}}` templates, or raw text. */
export type CaseBody = { kind: "json"; value: unknown } | { kind: "raw"; text: string };

export interface CaseRequest {
  method: string;
  /** Relative to the 1C base URL, e.g. /v1/orders/paid. */
  path: string;
  /** Defaults merged in; headers a case set to null are gone. Names in lower case. */
  headers: Record<string, string>;
  body: CaseBody | undefined;
}

export interface CaseExpect {
  status: number;
  /** Lower-case header name → expectation. */
  headers: Record<string, unknown>;
  /** Dotted path into the JSON answer → expectation. */
  body: Record<string, unknown>;
}

/**
 * A case whose answer depends on the base's data or on a fault (a refusal of a given cause, an
 * unforeseen error): run where the server can be staged (the emulator's faults), skipped elsewhere.
 */
export interface CaseStage {
  /** The emulator's faults while the case runs (src/onec-emulator/faults.ts). */
  emulator: Record<string, unknown>;
  /** What a real base would need to give this answer, for the probe's report. */
  base: string;
}

export interface ContractCase {
  name: string;
  description: string;
  request: CaseRequest;
  expect: CaseExpect;
  stage?: CaseStage;
}

export class ContractFileError extends Error {
  override readonly name = "ContractFileError";
}

/** Reads `cases.json` from `dir` (a folder URL ending in "/"); bodies referring to an example are built here. */
export function loadContract(dir: URL = CONTRACT_DIR): ContractCase[] {
  const file = new URL(CASES_FILE, dir);
  return parseContract(readJson(file, "contract file"), file);
}

/** `file` is where example paths are resolved from. */
export function parseContract(input: unknown, file: URL): ContractCase[] {
  const root = object(input, "the contract");
  const defaults = root.defaults === undefined ? {} : object(root.defaults, "defaults");
  const defaultRequest = defaults.request === undefined ? {} : object(defaults.request, "defaults.request");
  const defaultExpect = defaults.expect === undefined ? {} : object(defaults.expect, "defaults.expect");
  const requestHeaders = headerMap(defaultRequest.headers, "defaults.request.headers");
  const expectHeaders = expectationMap(defaultExpect.headers, "defaults.expect.headers");

  if (!Array.isArray(root.cases) || root.cases.length === 0) {
    throw new ContractFileError("the contract needs a non-empty cases array");
  }
  const seen = new Set<string>();
  return root.cases.map((raw: unknown, index) => {
    const item = object(raw, `cases[${index}]`);
    const name = item.name;
    if (typeof name !== "string" || !/^[a-z0-9][a-z0-9-]*$/.test(name)) {
      throw new ContractFileError(`cases[${index}].name must be lower-case letters, digits and dashes`);
    }
    if (seen.has(name)) throw new ContractFileError(`case name "${name}" is used twice`);
    seen.add(name);
    const where = `case "${name}"`;
    const request = object(item.request, `${where}: request`);
    const expect = object(item.expect, `${where}: expect`);
    if (typeof request.method !== "string" || !/^[A-Z]+$/.test(request.method)) {
      throw new ContractFileError(`${where}: request.method must be an upper-case HTTP method`);
    }
    if (typeof request.path !== "string" || !request.path.startsWith("/")) {
      throw new ContractFileError(`${where}: request.path must start with "/"`);
    }
    if (typeof expect.status !== "number" || !Number.isInteger(expect.status)) {
      throw new ContractFileError(`${where}: expect.status must be an integer`);
    }
    const headers = mergeHeaders(requestHeaders, headerMap(request.headers, `${where}: request.headers`));
    const stage = item.stage === undefined ? undefined : caseStage(item.stage, `${where}: stage`);
    return {
      name,
      description: typeof item.description === "string" ? item.description : "",
      ...(stage === undefined ? {} : { stage }),
      request: {
        method: request.method,
        path: request.path,
        headers,
        body: request.body === undefined ? undefined : caseBody(request.body, file, `${where}: request.body`),
      },
      expect: {
        status: expect.status,
        headers: { ...expectHeaders, ...expectationMap(expect.headers, `${where}: expect.headers`) },
        body: expect.body === undefined ? {} : object(expect.body, `${where}: expect.body`),
      },
    };
  });
}

function caseStage(input: unknown, where: string): CaseStage {
  const spec = object(input, where);
  if (typeof spec.base !== "string" || spec.base === "") {
    throw new ContractFileError(`${where}.base must say what a real base needs for this answer`);
  }
  return { emulator: object(spec.emulator, `${where}.emulator`), base: spec.base };
}

function caseBody(input: unknown, file: URL, where: string): CaseBody {
  const spec = object(input, where);
  if (typeof spec.raw === "string") return { kind: "raw", text: spec.raw };
  if ("json" in spec) return { kind: "json", value: spec.json };
  if (typeof spec.example !== "string") {
    throw new ContractFileError(`${where} needs one of "example", "json" or "raw"`);
  }
  const value = readJson(new URL(spec.example, file), `${where}: example`);
  const set = spec.set === undefined ? {} : object(spec.set, `${where}.set`);
  for (const [path, replacement] of Object.entries(set)) {
    if (!setPath(value, path, replacement)) {
      throw new ContractFileError(`${where}.set: the example has no place for "${path}"`);
    }
  }
  const unset = spec.unset ?? [];
  if (!Array.isArray(unset) || !unset.every((path) => typeof path === "string")) {
    throw new ContractFileError(`${where}.unset must be an array of paths`);
  }
  for (const path of unset) {
    if (!setPath(value, path, undefined)) throw new ContractFileError(`${where}.unset: the example has no "${path}"`);
  }
  return { kind: "json", value };
}

/** Header values are strings, or null to drop a default. */
function headerMap(input: unknown, where: string): Record<string, string | null> {
  if (input === undefined) return {};
  const map: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(object(input, where))) {
    if (typeof value !== "string" && value !== null) {
      throw new ContractFileError(`${where}.${name} must be a string or null`);
    }
    map[name.toLowerCase()] = value;
  }
  return map;
}

function expectationMap(input: unknown, where: string): Record<string, unknown> {
  if (input === undefined) return {};
  return Object.fromEntries(Object.entries(object(input, where)).map(([name, value]) => [name.toLowerCase(), value]));
}

function mergeHeaders(
  defaults: Record<string, string | null>,
  own: Record<string, string | null>,
): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...defaults, ...own })) if (value !== null) merged[name] = value;
  return merged;
}

function object(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ContractFileError(`${where} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

function readJson(file: URL, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ContractFileError(`${what}: cannot read ${file.pathname}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ContractFileError(`${what}: ${file.pathname} is not JSON: ${(error as Error).message}`);
  }
}
