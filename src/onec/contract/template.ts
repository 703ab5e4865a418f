import { getPath, isObject } from "./json-path.ts";

/**
 * `{{…}}` placeholders in the contract's cases, filled just before a case runs:
 * {{run}}, {{key}}, {{case}}, and {{<case>.status}}, {{<case>.headers.<name>}},
 * {{<case>.body.<path>}} for what an earlier case got back.
 */

/** What one case got back, kept so later cases can refer to it. */
export interface RecordedAnswer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON; undefined when the answer was not JSON. */
  body: unknown;
}

export interface TemplateScope {
  run: string;
  key: string;
  caseName: string;
  answers: ReadonlyMap<string, RecordedAnswer>;
}

export class TemplateError extends Error {
  override readonly name = "TemplateError";
}

const NAME = "[A-Za-z0-9_.:-]+";
const PLACEHOLDER = new RegExp(`\\{\\{(${NAME})\\}\\}`, "g");
const WHOLE = new RegExp(`^\\{\\{(${NAME})\\}\\}$`);

/** Fills every string inside `value` (object keys stay as they are); a copy, `value` is not touched. */
export function fillTemplates(value: unknown, scope: TemplateScope): unknown {
  if (typeof value === "string") return fillString(value, scope);
  if (Array.isArray(value)) return value.map((item) => fillTemplates(item, scope));
  if (isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, fillTemplates(item, scope)]));
  }
  return value;
}

/** A string that is one placeholder takes the referenced value's type; inside text it becomes text. */
function fillString(text: string, scope: TemplateScope): unknown {
  const whole = WHOLE.exec(text);
  if (whole?.[1] !== undefined) return lookup(whole[1], scope);
  return text.replace(PLACEHOLDER, (_match, name: string) => {
    const value = lookup(name, scope);
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

function lookup(name: string, scope: TemplateScope): unknown {
  if (name === "run") return scope.run;
  if (name === "key") return scope.key;
  if (name === "case") return scope.caseName;
  const dot = name.indexOf(".");
  if (dot < 0) throw new TemplateError(`unknown placeholder {{${name}}}`);
  const caseName = name.slice(0, dot);
  const part = name.slice(dot + 1);
  const answer = scope.answers.get(caseName);
  if (answer === undefined) {
    throw new TemplateError(`{{${name}}}: case "${caseName}" has no answer (not run before this one, or it got none)`);
  }
  let value: unknown;
  if (part === "status") value = answer.status;
  else if (part.startsWith("headers.")) value = answer.headers[part.slice("headers.".length).toLowerCase()];
  else if (part === "body") value = answer.body;
  else if (part.startsWith("body.")) value = getPath(answer.body, part.slice("body.".length));
  else throw new TemplateError(`{{${name}}}: after the case name comes status, headers.<name> or body.<path>`);
  if (value === undefined) throw new TemplateError(`{{${name}}}: the answer to "${caseName}" has no ${part}`);
  return value;
}
