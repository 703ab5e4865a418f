import { isDeepStrictEqual } from "node:util";
import type { CaseExpect } from "./cases.ts";
import { getPath, isObject } from "./json-path.ts";

/**
 * Pure: does an answer meet a case's expectations? Expectations arrive with
 * their templates already filled. An expectation is a plain JSON value (equal,
 * deeply) or a matcher: an object whose keys all start with "$".
 */

export interface ObservedAnswer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  bodyText: string;
}

/** Every way the answer differs from the expectation; empty when it meets it. */
export function compareAnswer(expect: CaseExpect, answer: ObservedAnswer): string[] {
  const problems: string[] = [];
  if (answer.status !== expect.status) problems.push(`status ${answer.status}, expected ${expect.status}`);
  for (const [name, expectation] of Object.entries(expect.headers)) {
    const problem = checkValue(expectation, answer.headers[name.toLowerCase()]);
    if (problem !== undefined) problems.push(`header ${name}: ${problem}`);
  }
  const paths = Object.entries(expect.body);
  if (paths.length > 0) {
    const body = jsonOrUndefined(answer.bodyText);
    if (body === undefined) {
      problems.push(`body is not JSON: ${excerpt(answer.bodyText)}`);
    } else {
      for (const [path, expectation] of paths) {
        const problem = checkValue(expectation, getPath(body, path));
        if (problem !== undefined) problems.push(`body ${path}: ${problem}`);
      }
    }
  }
  return problems;
}

/** One value against one expectation; undefined `actual` means absent. Returns what is wrong, or undefined. */
export function checkValue(expectation: unknown, actual: unknown): string | undefined {
  if (isMatcher(expectation)) {
    for (const [operator, argument] of Object.entries(expectation)) {
      const problem = applyMatcher(operator, argument, actual);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (actual === undefined) return `absent, expected ${show(expectation)}`;
  return isDeepStrictEqual(actual, expectation) ? undefined : `${show(actual)}, expected ${show(expectation)}`;
}

function applyMatcher(operator: string, argument: unknown, actual: unknown): string | undefined {
  switch (operator) {
    case "$type":
      return jsonType(actual) === argument ? undefined : `${show(actual)} is not of type ${show(argument)}`;
    case "$match": {
      if (typeof argument !== "string") return `$match needs a regular expression string, got ${show(argument)}`;
      let pattern: RegExp;
      try {
        pattern = new RegExp(argument);
      } catch (error) {
        return `bad $match pattern: ${(error as Error).message}`;
      }
      return typeof actual === "string" && pattern.test(actual)
        ? undefined
        : `${show(actual)} does not match /${argument}/`;
    }
    case "$absent":
      if (argument === true) return actual === undefined ? undefined : `${show(actual)}, expected absent`;
      return actual === undefined ? "absent, expected present" : undefined;
    default:
      return `unknown matcher ${operator}`;
  }
}

function isMatcher(value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.some((key) => key.startsWith("$"));
}

function jsonType(value: unknown): string {
  if (value === undefined) return "absent";
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** A few words for the table: "201 order", "409 EVENT_ID_REUSED", "200 contract 2". */
export function describeExpected(expect: CaseExpect): string {
  const code = expect.body["error.code"];
  if (typeof code === "string") return `${expect.status} ${code}`;
  if ("order.id" in expect.body) return `${expect.status} order`;
  const contract = expect.body.contract_version;
  if (typeof contract === "string") return `${expect.status} contract ${contract}`;
  return String(expect.status);
}

/** The same few words for what came back: "201 order ORD-000001", "400 BAD_JSON". */
export function describeActual(answer: ObservedAnswer): string {
  const body = jsonOrUndefined(answer.bodyText);
  const code = getPath(body, "error.code");
  if (typeof code === "string") return `${answer.status} ${code}`;
  const number = getPath(body, "order.number");
  if (typeof number === "string") return `${answer.status} order ${number}`;
  const contract = getPath(body, "contract_version");
  if (typeof contract === "string") return `${answer.status} contract ${contract}`;
  if (body === undefined && answer.bodyText !== "") return `${answer.status} (not JSON)`;
  return String(answer.status);
}

/** undefined for anything that is not JSON. */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function show(value: unknown): string {
  if (value === undefined) return "absent";
  // JSON already escapes line breaks; flattening spaces would hide what differs.
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

function excerpt(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
