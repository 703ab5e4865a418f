import { readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { gatewayBin } from "../support/start-script.ts";
import { gateway, repoRoot } from "./cli-support.ts";

describe("gateway usage", { timeout: 60_000 }, () => {
  it("prints the help for the tool and for each command on stdout", () => {
    const tool = gateway(["--help"], {});
    expect(tool.status).toBe(0);
    expect(tool.stdout).toMatch(/^Usage: gateway <command>/);
    for (const command of ["worker", "status", "list", "replay", "probe"]) {
      const help = gateway([command, "--help"], {});
      expect(help.status).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: gateway ${command}`));
    }
  });

  it.each([[[]], [["deliver"]], [["list", "--status", "FAILED_FINAL", "--colour"]], [["status"]]])(
    "%j: usage on stderr, exit 2",
    (args) => {
      const run = gateway(args, {});
      expect(run.status).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(/Usage: gateway/);
    },
  );

  it("reports a configuration error in one line, exit 1", () => {
    const run = gateway(["worker"], {});
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toMatch(/^configuration error: ONEC_URL is required[^\n]*$/);
  });

  it("ships an executable bin with a node shebang", () => {
    const manifest = JSON.parse(readFileSync(`${repoRoot}package.json`, "utf8")) as { bin?: Record<string, string> };
    expect(manifest.bin).toEqual({ gateway: "dist/cli/main.js" });
    const bin = `${repoRoot}${gatewayBin()}`;
    expect(statSync(bin).mode & 0o111).not.toBe(0);
    expect(readFileSync(bin, "utf8")).toMatch(/^#!\/usr\/bin\/env node\n/);
  });
});
