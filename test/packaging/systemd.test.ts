import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLOSE_BOUND_MS } from "./rehearse.ts";

/**
 * deploy/systemd/onec-gateway.service under systemd's own checker. `systemd-analyze verify`
 * exits 0 on an unknown key or a value it cannot parse (it only warns, then ignores the line),
 * so a clean unit is exit 0 and no output at all.
 */
const repoRoot = new URL("../../", import.meta.url).pathname;
const unitPath = join(repoRoot, "deploy/systemd/onec-gateway.service");
const unitText = readFileSync(unitPath, "utf8");
const analyze = systemdAnalyzeAvailable();
const scratch = mkdtempSync(join(tmpdir(), "gateway-unit-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Whether systemd-analyze runs here. Without it the tests are skipped with one line, unless
 * SYSTEMD_ANALYZE_REQUIRED=1 (CI, .ci/run), where its absence fails this file instead of skipping it.
 */
function systemdAnalyzeAvailable(): boolean {
  if (spawnSync("systemd-analyze", ["--version"]).status === 0) return true;
  if (process.env.SYSTEMD_ANALYZE_REQUIRED === "1") {
    throw new Error("SYSTEMD_ANALYZE_REQUIRED=1 but systemd-analyze is missing: apt-get install systemd");
  }
  console.warn("skipping the systemd unit tests: systemd-analyze is missing (apt-get install systemd)");
  return false;
}

function verify(text: string): { status: number | null; output: string } {
  const path = join(scratch, "onec-gateway.service");
  writeFileSync(path, text);
  const result = spawnSync("systemd-analyze", ["verify", path], { encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

function settings(text: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    const match = /^(\w+)=(.*)$/.exec(line.trim());
    if (match !== null) map.set(match[1] ?? "", [...(map.get(match[1] ?? "") ?? []), match[2] ?? ""]);
  }
  return map;
}

describe.skipIf(!analyze)("the systemd unit", () => {
  it("passes systemd-analyze verify without a warning", () => {
    expect(verify(unitText)).toEqual({ status: 0, output: "" });
  });

  it.each([
    ["KillSignal=SIGTERM", "KillSignal=SIGTERM\nKillSignl=SIGTERM"],
    ["Restart=on-failure", "Restart=sometimes"],
    ["ExecStart=node ", "ExecStart=nodejs-missing "],
    ["[Service]", "[Servise]"],
  ])("a copy with %s changed to %s does not", (from, to) => {
    expect(unitText).toContain(from);
    expect(verify(unitText.replace(from, to))).not.toEqual({ status: 0, output: "" });
  });

  it("is hardened: systemd-analyze security rates its exposure 2.0 or lower", () => {
    const path = join(scratch, "security", "onec-gateway.service");
    rmSync(join(scratch, "security"), { recursive: true, force: true });
    spawnSync("mkdir", ["-p", join(scratch, "security")]);
    copyFileSync(unitPath, path);
    const result = spawnSync("systemd-analyze", ["security", "--offline=true", path], { encoding: "utf8" });
    const exposure = /Overall exposure level for .*: (\d+\.\d+)/.exec(result.stdout)?.[1];
    expect(Number(exposure), result.stdout + result.stderr).toBeLessThanOrEqual(2);
  });

  it("runs package.json's start command as its own user, stops on SIGTERM within TimeoutStopSec, and allows V8's JIT", () => {
    const unit = settings(unitText);
    const start = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { scripts: { start: string } })
      .scripts.start;
    expect(unit.get("ExecStart")?.[0]).toBe(start.replace(" dist/main.js", " /opt/onec-gateway/dist/main.js"));
    expect(unit.get("DynamicUser")).toEqual(["yes"]);
    expect(unit.get("StateDirectory")).toEqual(["onec-gateway"]);
    expect(unit.get("Environment")).toContain("DATABASE_URL=%S/onec-gateway/gateway.db");
    expect(unit.get("KillSignal")).toEqual(["SIGTERM"]);
    const delay = Number(
      unit
        .get("Environment")
        ?.find((e) => e.startsWith("SHUTDOWN_DELAY_MS="))
        ?.split("=")[1] ?? 0,
    );
    expect(Number(unit.get("TimeoutStopSec")?.[0]) * 1000).toBeGreaterThan(delay + CLOSE_BOUND_MS);
    expect(unit.has("MemoryDenyWriteExecute")).toBe(false);
    expect(unit.get("EnvironmentFile")).toEqual(["/etc/onec-gateway/gateway.env"]);
  });
});
