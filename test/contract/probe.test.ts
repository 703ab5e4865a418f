/**
 * `gateway probe` as an operator runs it: a child process against a live
 * server. Asynchronous spawns, since the servers live in this process.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { cliEnv, repoRoot } from "../cli/cli-support.ts";
import { gatewayBin } from "../support/start-script.ts";
import { EXAMPLE_SKUS, startBrokenOnec, startOnecOfVersion } from "./support.ts";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function probe(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [gatewayBin(), "probe", ...args], {
    cwd: repoRoot,
    env: cliEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

describe("gateway probe", { timeout: 60_000 }, () => {
  let emulator: OnecEmulator;

  beforeEach(async () => {
    emulator = await startOnecEmulator({ faults: { knownSkus: [...EXAMPLE_SKUS] } });
  });
  afterEach(async () => {
    await emulator.close();
  });

  it("prints a table of every case against a base that keeps the contract, exit 0", async () => {
    const run = await probe(["--onec-url", emulator.url, "--test-base"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^case +expected +actual +ok$/m);
    expect(run.stdout).toMatch(/^first-delivery +201 order +201 order ORD-000001 +ok$/m);
    expect(run.stdout).toMatch(/^repeat +200 order +200 order ORD-000001 +ok$/m);
    expect(run.stdout).toMatch(/^unknown-article +422 UNKNOWN_SKU +422 UNKNOWN_SKU +ok$/m);
    expect(run.stdout).toMatch(/^status-of-unknown +404 NOT_FOUND +404 NOT_FOUND +ok$/m);
    expect(run.stdout).toMatch(/^status-of-other-case-key +404 NOT_FOUND +404 NOT_FOUND +ok$/m);
    expect(run.stdout).toMatch(/^health +200 contract 3 +200 contract 3 +ok$/m);
    expect(run.stdout).toMatch(/^key-dot +400 BAD_IDEMPOTENCY_KEY +400 BAD_IDEMPOTENCY_KEY +ok$/m);
    // A base cannot be made to fail on demand: the staged cases are named, with what they need, not run.
    expect(run.stdout).toMatch(/^processing-error +500 PROCESSING_ERROR +skipped +skipped$/m);
    expect(run.stdout).toMatch(/^ {2}processing-error: 500 PROCESSING_ERROR; staged: needs an unforeseen error/m);
    expect(run.stdout).toMatch(/^key-outside-alphabet +400 BAD_IDEMPOTENCY_KEY +400 BAD_IDEMPOTENCY_KEY +ok$/m);
    expect(run.stdout).not.toMatch(/FAIL/);
    expect(run.stdout).toMatch(
      /^1C reports contract version 3, extension version \d+\.\d+\.\d+\.\d+; this gateway speaks contract version 3\.$/m,
    );
    // A currency no agreement is in (XTS, ISO 4217's code for tests): refused, and the refused key holds no order.
    expect(run.stdout).toMatch(/^currency-of-no-agreement +422 CURRENCY_MISMATCH +422 CURRENCY_MISMATCH +ok$/m);
    expect(run.stdout).toMatch(/^status-of-currency-mismatch +404 NOT_FOUND +404 NOT_FOUND +ok$/m);
    expect(run.stdout).toMatch(/All 20 cases run passed/);
    expect(run.stdout).toMatch(/^3 staged cases were not run/m);
    // One run, one order: the one the operator is warned about.
    expect(emulator.orders()).toHaveLength(1);
    expect(run.stdout).toContain(emulator.orders()[0]?.key);
  });

  it("refuses to run without --test-base, exit 2, sending nothing", async () => {
    const run = await probe(["--onec-url", emulator.url]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^gateway probe: --test-base is required: the probe creates real orders/);
    expect(run.stderr).toMatch(/Usage: gateway probe/);
    expect(emulator.postCount()).toBe(0);
  });

  it("exits 2 without --onec-url or with one that is not http(s)", async () => {
    expect((await probe(["--test-base"])).stderr).toMatch(/--onec-url is required/);
    const ftp = await probe(["--onec-url", "ftp://1c.local", "--test-base"]);
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toMatch(/--onec-url must be an http\(s\) URL/);
  });

  it("exits 1 and shows the differences against a base that creates a new order on every repeat", async () => {
    const broken = await startBrokenOnec();
    try {
      const run = await probe(["--onec-url", broken.url, "--test-base"]);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^first-delivery +201 order +201 order BRK-1 +ok$/m);
      expect(run.stdout).toMatch(/^repeat +200 order +201 order BRK-2 +FAIL$/m);
      expect(run.stdout).toMatch(/^Differences:$/m);
      expect(run.stdout).toMatch(
        /^ {2}repeat: status 201, expected 200; .*body order\.number: "BRK-2", expected "BRK-1"$/m,
      );
      expect(run.stdout).toMatch(/cases differ from the contract\.$/m);
      expect(run.stdout).toMatch(/^1C reports contract version \(none\), extension version \(none\)/m);
    } finally {
      await broken.close();
    }
  });

  it("says which contract version 1C speaks when it is not the gateway's, exit 1", async () => {
    const old = await startOnecOfVersion("1");
    try {
      const run = await probe(["--onec-url", old.url, "--test-base"]);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^health +200 contract 3 +200 contract 1 +FAIL$/m);
      expect(run.stdout).toMatch(/^ {2}health: body contract_version: "1", expected "3"/m);
      expect(run.stdout).toMatch(/^1C reports contract version 1, extension version 1\.0\.0\.1;/m);
      expect(run.stderr).toMatch(/1C speaks contract version 1, this gateway 3: load the 1C extension/);
    } finally {
      await old.close();
    }
  });

  it("takes Basic credentials from ONEC_USER/ONEC_PASSWORD, and says to check them on 401", async () => {
    const secured = await startOnecEmulator({
      user: "exchange",
      password: "s3cret",
      faults: { knownSkus: [...EXAMPLE_SKUS] },
    });
    try {
      const ok = await probe(["--onec-url", secured.url, "--test-base"], {
        ONEC_USER: "exchange",
        ONEC_PASSWORD: "s3cret",
      });
      expect(ok.code, ok.stdout).toBe(0);
      const flags = await probe([
        "--onec-url",
        secured.url,
        "--test-base",
        "--user",
        "exchange",
        "--password",
        "s3cret",
      ]);
      expect(flags.code, flags.stdout).toBe(0);

      const wrong = await probe(["--onec-url", secured.url, "--test-base"], {
        ONEC_USER: "exchange",
        ONEC_PASSWORD: "x",
      });
      expect(wrong.code).toBe(1);
      expect(wrong.stdout).toMatch(/^first-delivery +201 order +401 UNAUTHORIZED +FAIL$/m);
      expect(wrong.stderr).toMatch(/check --user\/--password \(or ONEC_USER\/ONEC_PASSWORD\)/);
      expect(secured.orders()).toHaveLength(2);
    } finally {
      await secured.close();
    }
  });
});
