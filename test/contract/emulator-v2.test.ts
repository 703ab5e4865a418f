/**
 * What contract 2 adds, on the emulator: the key alphabet on POST and GET, the key a named sender
 * had under contract 1, GET /v1/health and the contract version, the maintenance switch, 1C refusing
 * to post (ORDER_NOT_VALID), and a rejected key tried anew with another body.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CONTRACT_VERSION } from "../../src/onec/contract/version.ts";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { exampleEvent } from "../support/events.ts";

const JSON_TYPE = "application/json; charset=utf-8";

let emulator: OnecEmulator;

beforeEach(async () => {
  emulator = await startOnecEmulator({ faults: { knownSkus: ["TEA-001", "MUG-010"] } });
});
afterEach(async () => {
  await emulator.close();
});

async function post(key: string | undefined, body: unknown = exampleEvent()): Promise<Response> {
  const headers: Record<string, string> = { "content-type": JSON_TYPE };
  if (key !== undefined) headers["idempotency-key"] = key;
  return fetch(`${emulator.url}/v1/orders/paid`, { method: "POST", headers, body: JSON.stringify(body) });
}

async function errorCode(response: Response): Promise<string | undefined> {
  return ((await response.json()) as { error?: { code?: string } }).error?.code;
}

describe("the key alphabet: A-Z a-z 0-9 . _ : ~ -, 1..300", () => {
  it.each([["shop/evt-1"], ["evt%2F1"], ["evt 1"], ["evt-ä"], ["x".repeat(301)]])(
    "POST refuses %j with 400 BAD_IDEMPOTENCY_KEY and stores nothing",
    async (key) => {
      const response = await post(key);
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("BAD_IDEMPOTENCY_KEY");
      expect(emulator.orders()).toHaveLength(0);
    },
  );

  it("POST without a key is 400 MISSING_IDEMPOTENCY_KEY", async () => {
    const response = await post(undefined);
    expect([response.status, await errorCode(response)]).toEqual([400, "MISSING_IDEMPOTENCY_KEY"]);
  });

  it("a key of the whole alphabet, 300 long, is accepted by POST and reached by GET as it is", async () => {
    const key = `shop-b~${"Az09._:-".repeat(40)}`.slice(0, 300);
    expect(key).toHaveLength(300);
    const created = await post(key);
    expect(created.status).toBe(201);
    const found = await fetch(`${emulator.url}/v1/events/${key}`);
    expect(found.status).toBe(200);
    expect(((await found.json()) as { event_id: string }).event_id).toBe(key);
  });

  it("GET of a key outside the alphabet is 404 NOT_FOUND", async () => {
    const response = await fetch(`${emulator.url}/v1/events/${encodeURIComponent("shop/evt")}`);
    expect([response.status, await errorCode(response)]).toEqual([404, "NOT_FOUND"]);
  });
});

describe("events delivered under a contract-1 key (<sender>/<event_id>)", () => {
  it("are found and replayed by the contract-2 key (<sender>~<event_id>), never ordered twice", async () => {
    const journal = await import("node:fs/promises");
    const { mkdtemp } = journal;
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = await mkdtemp(join(tmpdir(), "emulator-legacy-"));
    const path = join(dir, "orders.jsonl");
    // A journal an emulator of contract 1 wrote: the order under "shop-b/evt-7".
    const body = JSON.stringify(exampleEvent());
    const { createHash } = await import("node:crypto");
    const hash = createHash("sha256").update(body).digest("hex");
    const record = {
      key: "shop-b/evt-7",
      hash,
      order: { id: "11111111-1111-4111-8111-111111111111", number: "ORD-000007" },
      correlationId: "old",
      createdAt: "2026-11-29T12:00:00.000Z",
    };
    await journal.writeFile(path, `${JSON.stringify(record)}\n`);
    const upgraded = await startOnecEmulator({ journalPath: path });
    try {
      const again = await fetch(`${upgraded.url}/v1/orders/paid`, {
        method: "POST",
        headers: { "content-type": JSON_TYPE, "idempotency-key": "shop-b~evt-7" },
        body,
      });
      expect(again.status).toBe(200);
      expect(((await again.json()) as { order: unknown }).order).toEqual(record.order);
      const status = await fetch(`${upgraded.url}/v1/events/shop-b~evt-7`);
      expect(status.status).toBe(200);
      expect(await status.json()).toMatchObject({ event_id: "shop-b~evt-7", order: record.order });
      expect(upgraded.orders()).toHaveLength(1);
    } finally {
      await upgraded.close();
      await journal.rm(dir, { recursive: true, force: true });
    }
  });
});

describe("GET /v1/health", () => {
  it("says ok and the contract version; every /v1 answer carries X-Contract-Version", async () => {
    const response = await fetch(`${emulator.url}/v1/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-contract-version")).toBe(CONTRACT_VERSION);
    expect(await response.json()).toEqual({
      status: "ok",
      contract_version: CONTRACT_VERSION,
      extension_version: "0.0.0.0",
      problems: [],
    });
    expect((await post("evt-h")).headers.get("x-contract-version")).toBe(CONTRACT_VERSION);
  });

  it("needs the credentials like every /v1 route", async () => {
    const secured = await startOnecEmulator({ user: "u", password: "p" });
    try {
      expect((await fetch(`${secured.url}/v1/health`)).status).toBe(401);
    } finally {
      await secured.close();
    }
  });
});

describe("maintenance switch", () => {
  it("answers POST and health 503 MAINTENANCE with Retry-After, storing nothing, and lets GET /v1/events through", async () => {
    expect((await post("evt-before")).status).toBe(201);
    emulator.setFaults({ maintenance: true, retryAfterSeconds: 120 });
    const refused = await post("evt-m");
    expect([refused.status, refused.headers.get("retry-after"), await errorCode(refused)]).toEqual([
      503,
      "120",
      "MAINTENANCE",
    ]);
    const health = await fetch(`${emulator.url}/v1/health`);
    expect([health.status, health.headers.get("retry-after")]).toEqual([503, "120"]);
    expect(await health.json()).toMatchObject({ status: "maintenance", error: { code: "MAINTENANCE" } });
    expect((await fetch(`${emulator.url}/v1/events/evt-before`)).status).toBe(200);
    expect(emulator.orders()).toHaveLength(1);
    emulator.setFaults({ maintenance: false });
    expect((await post("evt-m")).status).toBe(201);
  });
});

describe("1C refusing to post (ORDER_NOT_VALID) and a rejected key resent", () => {
  it("answers 422 ORDER_NOT_VALID with 1C's reason, stores nothing, and takes the key anew later", async () => {
    emulator.setFaults({ orderNotValid: "Не рассчитаны автоматические скидки" });
    const refused = await post("evt-nv");
    expect(refused.status).toBe(422);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("ORDER_NOT_VALID");
    expect(body.error.message).toContain("Не рассчитаны автоматические скидки");
    expect(emulator.orders()).toHaveLength(0);
    // A repeat of a key 1C already ordered is judged first: the refusal does not apply to it.
    emulator.setFaults({ orderNotValid: null });
    expect((await post("evt-nv")).status).toBe(201);
    emulator.setFaults({ orderNotValid: "still refused" });
    expect((await post("evt-nv")).status).toBe(200);
  });

  it("a key refused with UNKNOWN_SKU, resent with another body, is tried anew: 422 again, or 201 once fixed — never 409", async () => {
    const unknown = {
      ...exampleEvent(),
      order: { ...exampleEvent().order, items: [{ sku: "NOPE", name: "x", quantity: 1, price: "1.00" }] },
    };
    expect((await post("evt-r", unknown)).status).toBe(422);
    const changed = { ...unknown, occurred_at: "2026-11-29T12:35:00Z" };
    const again = await post("evt-r", changed);
    expect([again.status, await errorCode(again)]).toEqual([422, "UNKNOWN_SKU"]);
    expect((await post("evt-r")).status).toBe(201);
  });

  it("the faults round-trip through the control endpoint and are checked", async () => {
    const put = (body: unknown) =>
      fetch(`${emulator.url}/_emulator/faults`, {
        method: "PUT",
        headers: { "content-type": JSON_TYPE },
        body: JSON.stringify(body),
      });
    expect((await put({ maintenance: true, orderNotValid: "x" })).status).toBe(200);
    expect(emulator.faults).toMatchObject({ maintenance: true, orderNotValid: "x" });
    expect((await put({ maintenance: "yes" })).status).toBe(400);
    expect((await put({ orderNotValid: "" })).status).toBe(400);
  });
});
