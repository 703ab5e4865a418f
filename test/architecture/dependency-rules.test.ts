import { createRequire } from "node:module";
import { cruise, type IViolation } from "dependency-cruiser";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const ruleSet = require("./dependency-rules.cjs") as Parameters<typeof cruise>[1] extends infer O
  ? O extends { ruleSet?: infer R }
    ? R
    : never
  : never;

async function violations(baseDir: string): Promise<string[]> {
  const result = await cruise(["src"], {
    ruleSet,
    validate: true,
    baseDir,
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
  });
  if (typeof result.output === "string") throw new Error("expected a cruise result, got text");
  return result.output.summary.violations.map((v: IViolation) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}

describe("import rules (test/architecture/dependency-rules.cjs, run by npm test)", () => {
  it("catch a cycle, a core module reaching the edge, the domain reading the register, the 1C client reading the register, and the CLI using HTTP", async () => {
    const fixture = new URL("./fixture/", import.meta.url).pathname;
    expect(await violations(fixture)).toEqual([
      "cli-not-to-http: src/cli/view.ts → src/http/answer.ts",
      "core-not-to-edge: src/domain/snapshot.ts → src/http/answer.ts",
      "domain-not-to-register: src/domain/stored-status.ts → src/register/port.ts",
      "no-cycles: src/domain/snapshot.ts → src/http/answer.ts",
      "onec-client-stands-alone: src/onec/outcome.ts → src/register/port.ts",
    ]);
  });

  it("hold for the gateway itself", async () => {
    const root = new URL("../../", import.meta.url).pathname;
    expect(await violations(root)).toEqual([]);
  });
});
