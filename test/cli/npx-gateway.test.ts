import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

/**
 * README and docs/operations.md give support staff `npx gateway status | list | replay | …`,
 * run in the gateway's own directory. npm links a package's bin for its dependents, not
 * for the package itself: `npm run build` links it (scripts/build.mjs), and this runs it
 * as a person would, through npx, after the build the test command makes.
 */
const repoRoot = new URL("../../", import.meta.url).pathname;

describe("npx gateway in the gateway's own directory", () => {
  it("runs the command line", () => {
    const run = spawnSync("npx", ["--no-install", "gateway", "--help"], { cwd: repoRoot, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Usage: gateway <command> \[options\]/);
    expect(run.stdout).toMatch(/\n\s+status\b/);
  });
});
