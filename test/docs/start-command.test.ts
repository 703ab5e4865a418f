import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * README.md and docs/operations.md give the production command line and say
 * it is what `npm start` runs: the node flags they print (the young
 * generation's size, the heap's growth) must be package.json's, or an
 * operator copying them runs a gateway the benchmarks never measured.
 */

const repoRoot = new URL("../../", import.meta.url).pathname;
const startScript = (JSON.parse(readFileSync(`${repoRoot}package.json`, "utf8")) as { scripts: { start: string } })
  .scripts.start;

/** Every `node --… dist/main.js` command line in a document, flags and entry as written. */
function nodeCommands(document: string): string[] {
  const text = readFileSync(`${repoRoot}${document}`, "utf8");
  return [...text.matchAll(/node(?: --[\w-]+=\S+)+ dist\/main\.js/g)].map((match) => match[0]);
}

describe("the production command line in the docs", () => {
  it.each(["README.md", "docs/operations.md"])("is npm start's in %s", (document) => {
    const commands = nodeCommands(document);
    expect(commands.length, `${document} shows the command`).toBeGreaterThan(0);
    for (const command of commands) expect(command).toBe(startScript);
  });
});
