/**
 * The emulator side of the 1C contract: every case in cases.json, in order,
 * against the emulator the gateway's own tests rely on.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadContract } from "../../src/onec/contract/cases.ts";
import { type CaseStager, runContract } from "../../src/onec/contract/run-contract.ts";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { parseFaultsPatch } from "../../src/onec-emulator/faults.ts";
import { EXAMPLE_SKUS } from "./support.ts";

describe("the emulator keeps the 1C contract", () => {
  let emulator: OnecEmulator;

  beforeEach(async () => {
    emulator = await startOnecEmulator({ faults: { knownSkus: [...EXAMPLE_SKUS] } });
  });
  afterEach(async () => {
    await emulator.close();
  });

  it("covers what the contract promises", () => {
    expect(loadContract().map((c) => c.name)).toEqual([
      "health",
      "first-delivery",
      "repeat",
      "repeat-without-correlation-id",
      "reused-key-other-body",
      "unknown-article",
      "rejected-key-other-body",
      "status-of-rejected",
      "malformed-json",
      "missing-idempotency-key",
      "key-outside-alphabet",
      "not-json-content-type",
      "key-dot",
      "key-dot-dot",
      "date-past-1c-range",
      "currency-of-no-agreement",
      "status-of-currency-mismatch",
      "refused-customer-not-client",
      "processing-error",
      "status-of-processing-error",
      "status-of-delivered",
      "status-of-other-case-key",
      "status-of-unknown",
    ]);
  });

  /** The emulator's control surface, as the cases' stages name it. */
  function stager(target: OnecEmulator): CaseStager {
    const before = target.faults;
    return {
      async apply(faults) {
        const staged = parseFaultsPatch(faults);
        if (!staged.ok) throw new Error(staged.message);
        target.setFaults(staged.patch);
      },
      async reset() {
        target.setFaults(before);
      },
    };
  }

  it("passes every case, the staged ones with the faults they name", async () => {
    const results = await runContract({ baseUrl: emulator.url, stage: stager(emulator) });
    expect(results.filter((r) => !r.ok || r.skipped)).toEqual([]);
    expect(results).toHaveLength(loadContract().length);
    expect(results[1]).toMatchObject({ case: "first-delivery", expected: "201 order", actual: "201 order ORD-000001" });
  });

  it("without a way to stage them, skips the staged cases and says what a real base needs for each", async () => {
    const results = await runContract({ baseUrl: emulator.url });
    expect(results.filter((r) => !r.ok)).toEqual([]);
    const skipped = results.filter((r) => r.skipped);
    expect(skipped.map((r) => r.case)).toEqual([
      "refused-customer-not-client",
      "processing-error",
      "status-of-processing-error",
    ]);
    for (const result of skipped) expect(result).toMatchObject({ actual: "skipped", detail: /^staged: needs \S/ });
  });

  it("creates exactly one order per run, under the run's own key, so runs never collide", async () => {
    const first = await runContract({ baseUrl: emulator.url, run: "run-a", stage: stager(emulator) });
    const second = await runContract({ baseUrl: emulator.url, run: "run-b", stage: stager(emulator) });
    expect([...first, ...second].filter((r) => !r.ok)).toEqual([]);
    expect(emulator.orders().map((o) => o.key)).toEqual(["contract-run-a", "contract-run-b"]);
  });

  it("with Basic auth on the emulator, passes given the credentials and fails every case without them", async () => {
    const secured = await startOnecEmulator({
      user: "exchange",
      password: "s3cret",
      faults: { knownSkus: [...EXAMPLE_SKUS] },
    });
    try {
      const withCredentials = await runContract({ baseUrl: secured.url, user: "exchange", password: "s3cret" });
      expect(withCredentials.filter((r) => !r.ok)).toEqual([]);
      const without = await runContract({ baseUrl: `${secured.url}/` });
      expect(without.filter((r) => !r.skipped).every((r) => !r.ok)).toBe(true);
      expect(without[1]).toMatchObject({ case: "first-delivery", actual: "401 UNAUTHORIZED" });
    } finally {
      await secured.close();
    }
  });
});
