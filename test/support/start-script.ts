import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const repoRoot = new URL("../../", import.meta.url).pathname;

/** The production entry `npm start` runs: the built JavaScript, not the sources. */
export const START_ENTRY = "dist/main.js";

function manifest(): { scripts: Record<string, string>; bin: Record<string, string> } {
  return JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
    bin: Record<string, string>;
  };
}

/**
 * What `npm start` passes to node (package.json's start script, read from it),
 * so the tests and the bench run the production server on the same command
 * line, heap flags included: `node ...startArgs()`. It runs dist/, so the
 * build must be current (`npm test` builds first).
 */
export function startArgs(): string[] {
  const script = manifest().scripts.start ?? "";
  const [command, ...args] = script.trim().split(/\s+/);
  if (command !== "node" || args.at(-1) !== START_ENTRY || args.slice(0, -1).some((arg) => !arg.startsWith("--"))) {
    throw new Error(`package.json's start script is not "node [--flags] ${START_ENTRY}": ${script}`);
  }
  assertBuilt();
  return args;
}

/** The node flags of `npm start` before its entry: for a runner that adds the entry itself. */
export function startNodeFlags(): string[] {
  return startArgs().slice(0, -1);
}

/** The file `npx gateway` runs (package.json's "bin", the built CLI), relative to the repo root. */
export function gatewayBin(): string {
  const bin = manifest().bin.gateway;
  if (bin === undefined) throw new Error('package.json has no "bin": { "gateway" }');
  assertBuilt();
  return bin;
}

/**
 * dist/ exists and is no older than any file in src/: otherwise a test would
 * run yesterday's build and fail (or pass) for reasons not in the sources.
 */
export function assertBuilt(): void {
  let built: number;
  try {
    built = statSync(join(repoRoot, START_ENTRY)).mtimeMs;
  } catch {
    throw new Error(`${START_ENTRY} is missing: run \`npm run build\` (npm test does) before these tests`);
  }
  const src = join(repoRoot, "src");
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    if (statSync(file).mtimeMs > built) {
      throw new Error(`dist/ is older than ${file.slice(repoRoot.length)}: run \`npm run build\` (npm test does)`);
    }
  }
}
