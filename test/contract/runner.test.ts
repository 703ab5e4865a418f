/**
 * The runner must see a broken 1C: a contract check that passes everything proves nothing.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newRunId, runContract } from "../../src/onec/contract/run-contract.ts";
import { type BrokenOnec, startBrokenOnec } from "./support.ts";

describe("runContract against a 1C that breaks the contract", () => {
  let broken: BrokenOnec;

  beforeEach(async () => {
    broken = await startBrokenOnec();
  });
  afterEach(async () => {
    await broken.close();
  });

  it("passes the first delivery and fails the repeat that answers 201 with a new order", async () => {
    const results = await runContract({ baseUrl: broken.url });
    const byCase = new Map(results.map((r) => [r.case, r]));

    expect(byCase.get("first-delivery")).toMatchObject({ ok: true, detail: "" });
    const repeat = byCase.get("repeat");
    expect(repeat).toMatchObject({ ok: false, expected: "200 order", actual: "201 order BRK-2" });
    expect(repeat?.detail).toContain("status 201, expected 200");
    expect(repeat?.detail).toMatch(/body order\.id: "[^"]+", expected "[^"]+"/);
    expect(repeat?.detail).toContain('body order.number: "BRK-2", expected "BRK-1"');

    expect(byCase.get("reused-key-other-body")).toMatchObject({ ok: false, actual: "201 order BRK-4" });
    expect(byCase.get("status-of-delivered")).toMatchObject({ ok: false, actual: "404 NOT_FOUND" });
    // A base without GET /v1/health (contract 1) fails the first case: the probe says so before anything else.
    expect(byCase.get("health")).toMatchObject({ ok: false, actual: "404 NOT_FOUND" });
    // What the broken server does get right still passes: the runner judges case by case.
    expect(byCase.get("status-of-unknown")).toMatchObject({ ok: true });
  });
});

describe("runContract when the answer is not there or not right", () => {
  it("reports a refused connection as no answer on every case, without throwing", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));

    const results = await runContract({ baseUrl: `http://127.0.0.1:${port}` });
    const first = results.find((r) => r.case === "first-delivery");
    expect(first).toMatchObject({ ok: false, actual: "no answer" });
    expect(first?.detail).toMatch(/ECONNREFUSED/);
    // Later cases that refer to the first delivery's order cannot even be built.
    expect(results.find((r) => r.case === "repeat")).toMatchObject({ ok: false, actual: "not sent" });
    // Staged cases are not sent without a stager, so they neither pass nor fail.
    expect(results.filter((r) => !r.skipped).every((r) => !r.ok)).toBe(true);
  });

  it("reports a server that never answers as a timeout", async () => {
    const server = createServer(() => {
      // never answers
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const [first] = await runContract({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 200 });
      expect(first).toMatchObject({ ok: false, actual: "no answer", detail: "no answer within 200 ms" });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("flags an answer without JSON content type and without X-Correlation-ID", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(201, { "content-type": "text/html" });
      res.end("<html>created</html>");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const [first] = await runContract({ baseUrl: `http://127.0.0.1:${port}` });
      expect(first?.ok).toBe(false);
      expect(first?.actual).toBe("201 (not JSON)");
      expect(first?.detail).toContain('header content-type: "text/html" does not match /^application/json/');
      expect(first?.detail).toContain("header x-correlation-id: absent, expected");
      expect(first?.detail).toContain("body is not JSON: <html>created</html>");
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("newRunId", () => {
  it("is a sortable stamp and a random suffix, usable in an event_id", () => {
    const run = newRunId(new Date("2026-11-29T12:34:56.789Z"));
    expect(run).toMatch(/^20261129T123456Z-[0-9a-f]{6}$/);
    expect(`contract-${run}-unknown-sku`).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    expect(newRunId()).not.toBe(newRunId());
  });
});
