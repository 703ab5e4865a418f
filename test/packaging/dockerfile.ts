import { readFileSync } from "node:fs";

/**
 * A reader of the subset of Dockerfile syntax the project's Dockerfile uses, so the
 * packaging rehearsal runs the file's own instructions rather than a copy of them:
 * comments, `\` continuations, ARG before FROM (substituted into FROM), `FROM … AS name`,
 * and per instruction its flags (`--from=build`, `--interval=10s`) and its arguments,
 * in shell form (a string) or exec form (a JSON array).
 */

export interface Instruction {
  /** Upper case: RUN, COPY, ENV, … */
  readonly keyword: string;
  /** `--name=value` flags before the arguments. */
  readonly flags: Readonly<Record<string, string>>;
  /** The arguments after the flags, as written (continuations joined). */
  readonly text: string;
  /** The arguments in exec form, when they are a JSON array of strings. */
  readonly exec: readonly string[] | undefined;
  /** Line number in the file, from 1. */
  readonly line: number;
}

export interface Stage {
  readonly name: string;
  /** The FROM image, global ARGs substituted. */
  readonly image: string;
  readonly instructions: readonly Instruction[];
}

export interface Dockerfile {
  readonly args: Readonly<Record<string, string>>;
  readonly stages: readonly Stage[];
}

export function readDockerfile(path: string): Dockerfile {
  return parseDockerfile(readFileSync(path, "utf8"));
}

export function parseDockerfile(source: string): Dockerfile {
  const args: Record<string, string> = {};
  const stages: { name: string; image: string; instructions: Instruction[] }[] = [];
  for (const { text, line } of logicalLines(source)) {
    const match = /^(\w+)\s*(.*)$/s.exec(text);
    if (match === null) throw new Error(`Dockerfile line ${line}: not an instruction: ${text}`);
    const keyword = (match[1] ?? "").toUpperCase();
    const instruction = withFlags(keyword, match[2] ?? "", line);
    const current = stages.at(-1);
    if (keyword === "ARG" && current === undefined) {
      const [name = "", value = ""] = instruction.text.split("=", 2);
      args[name.trim()] = value.trim();
    } else if (keyword === "FROM") {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.text);
      if (from === null) throw new Error(`Dockerfile line ${line}: FROM image [AS name], got "${instruction.text}"`);
      const image = (from[1] ?? "").replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => args[a ?? b] ?? "");
      stages.push({ name: from[2] ?? String(stages.length), image, instructions: [] });
    } else if (current === undefined) {
      throw new Error(`Dockerfile line ${line}: ${keyword} before the first FROM`);
    } else {
      current.instructions.push(instruction);
    }
  }
  return { args, stages };
}

/** The last stage: the image `docker build` makes without --target. */
export function finalStage(dockerfile: Dockerfile): Stage {
  const stage = dockerfile.stages.at(-1);
  if (stage === undefined) throw new Error("the Dockerfile has no FROM");
  return stage;
}

/** The last instruction of a kind in a stage (CMD, USER, HEALTHCHECK… : the last one counts). */
export function last(stage: Stage, keyword: string): Instruction | undefined {
  return stage.instructions.filter((instruction) => instruction.keyword === keyword).at(-1);
}

/** ENV lines, in order: `ENV A=1 B="two words"` (and the old `ENV A 1`). */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const instruction of stage.instructions) {
    if (instruction.keyword !== "ENV") continue;
    const text = instruction.text;
    if (!/^\w+=/.test(text)) {
      const [name = "", ...rest] = text.split(/\s+/);
      env[name] = rest.join(" ");
      continue;
    }
    for (const pair of text.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
      const raw = pair[2] ?? "";
      env[pair[1] ?? ""] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
    }
  }
  return env;
}

/** `USER uid[:gid]` as numbers; undefined when the stage names no USER (root) or a user by name. */
export function numericUser(stage: Stage): { uid: number; gid: number } | undefined {
  const user = last(stage, "USER")?.text.trim();
  const match = user === undefined ? null : /^(\d+)(?::(\d+))?$/.exec(user);
  if (match === null) return undefined;
  const uid = Number(match[1]);
  return { uid, gid: match[2] === undefined ? uid : Number(match[2]) };
}

/** Docker's duration flags: "10s", "1m30s", "500ms". */
export function durationMs(text: string): number {
  let total = 0;
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, ns: 0.000001 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join("") !== text) {
    throw new Error(`not a duration: "${text}"`);
  }
  for (const part of parts) total += Number(part[1]) * (units[part[2] ?? ""] ?? 0);
  return total;
}

function* logicalLines(source: string): Generator<{ text: string; line: number }> {
  let pending = "";
  let start = 0;
  const lines = source.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const trimmed = raw.trim();
    // Comments and blank lines, also between continuation lines (as BuildKit allows).
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    if (pending === "") start = index + 1;
    if (trimmed.endsWith("\\")) {
      pending += `${trimmed.slice(0, -1)} `;
      continue;
    }
    yield { text: `${pending}${trimmed}`.trim(), line: start };
    pending = "";
  }
  if (pending !== "") yield { text: pending.trim(), line: start };
}

function withFlags(keyword: string, rest: string, line: number): Instruction {
  const flags: Record<string, string> = {};
  let text = rest.trim();
  for (
    let flag = /^--([\w-]+)(?:=(\S*))?\s*/.exec(text);
    flag !== null;
    flag = /^--([\w-]+)(?:=(\S*))?\s*/.exec(text)
  ) {
    flags[flag[1] ?? ""] = flag[2] ?? "true";
    text = text.slice(flag[0].length);
  }
  // HEALTHCHECK's flags are followed by CMD and then the command.
  if (keyword === "HEALTHCHECK" && /^CMD\s/i.test(text)) text = text.replace(/^CMD\s+/i, "");
  return { keyword, flags, text, exec: execForm(text), line };
}

function execForm(text: string): string[] | undefined {
  if (!text.startsWith("[")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.every((item) => typeof item === "string") ? value : undefined;
  } catch {
    return undefined;
  }
}
