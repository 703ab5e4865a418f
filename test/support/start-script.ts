import { readFileSync } from "node:fs";
import { join } from "node:path";

const repoRoot = new URL("../../", import.meta.url).pathname;

/**
 * What `npm start` passes to node (package.json's start script, read from it),
 * so the tests and the bench run the production server on the same command
 * line, heap flags included: `node ...startArgs()`.
 */
export function startArgs(): string[] {
  const scripts = (
    JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }
  ).scripts;
  const [command, ...args] = (scripts.start ?? "").trim().split(/\s+/);
  if (command !== "node" || args.slice(-3).join(" ") !== "--import tsx src/main.ts") {
    throw new Error(`package.json's start script is not "node [flags] --import tsx src/main.ts": ${scripts.start}`);
  }
  return args;
}

/** The node flags of `npm start` before its `--import tsx`: for a runner that adds the loader and the entry itself. */
export function startNodeFlags(): string[] {
  const args = startArgs();
  return args.slice(0, args.indexOf("--import"));
}
