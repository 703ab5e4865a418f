/**
 * What contract 3 adds, on the emulator (issue 20): keys "." and ".." refused, dates 1C's Date cannot
 * hold refused as a malformed event, a 422 code per known cause of refusal, and 500 PROCESSING_ERROR
 * (an RFC 9457 problem) for an error 1C cannot classify, distinct from a 503 outage.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REFUSAL_CODES } from "../../src/onec/contract/codes.ts";
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

async function post(key: string, body: unknown = exampleEvent()): Promise<Response> {
  return fetch(`${emulator.url}/v1/orders/paid`, {
    method: "POST",
    headers: { "content-type": JSON_TYPE, "idempotency-key": key },
    body: JSON.stringify(body),
  });
}

async function errorOf(response: Response): Promise<{ code?: string; message?: string } | undefined> {
  return ((await response.json()) as { error?: { code?: string; message?: string } }).error;
}

describe("keys that are dot-segments", () => {
  // RFC 3986 §5.2.4 removes "." and ".." segments from a path: GET /v1/events/. could never reach the key.
  it.each([["."], [".."]])("POST refuses %j with 400 BAD_IDEMPOTENCY_KEY and stores nothing", async (key) => {
    const response = await post(key);
    expect(response.status).toBe(400);
    expect((await errorOf(response))?.code).toBe("BAD_IDEMPOTENCY_KEY");
    expect(emulator.orders()).toHaveLength(0);
  });

  it.each([["..."], [".a"], ["a.."]])("other keys with dots, like %j, stay valid", async (key) => {
    expect((await post(key)).status).toBe(201);
  });
});

describe("dates past 1C's Date type (years 1 to 3999)", () => {
  it.each([
    ["occurred_at", { occurred_at: "4000-01-01T00:00:00Z" }],
    ["order.created_at", { order: { ...exampleEvent().order, created_at: "9999-12-31T23:59:59Z" } }],
    ["payment.paid_at", { payment: { ...exampleEvent().payment, paid_at: "0000-01-01T00:00:00Z" } }],
  ])("%s out of range is 400 BAD_EVENT naming the field, nothing stored", async (field, change) => {
    const response = await post(`evt-date-${field}`, { ...exampleEvent(), ...change });
    expect(response.status).toBe(400);
    const error = await errorOf(response);
    expect(error?.code).toBe("BAD_EVENT");
    expect(error?.message).toContain(field);
    expect(emulator.orders()).toHaveLength(0);
  });

  it("the last second of year 3999 is a date 1C holds", async () => {
    expect((await post("evt-3999", { ...exampleEvent(), occurred_at: "3999-12-31T23:59:59Z" })).status).toBe(201);
  });
});

describe("a refusal with a code of its own cause", () => {
  it("answers 422 with the code and 1C's text, stores nothing, and a repeat of an ordered key is still 200", async () => {
    emulator.setFaults({ refusal: { code: "CUSTOMER_NOT_CLIENT", message: "partner is not a client" } });
    const refused = await post("evt-nc");
    expect(refused.status).toBe(422);
    expect(await errorOf(refused)).toEqual({ code: "CUSTOMER_NOT_CLIENT", message: "partner is not a client" });
    expect(emulator.orders()).toHaveLength(0);
    emulator.setFaults({ refusal: null });
    expect((await post("evt-nc")).status).toBe(201);
    emulator.setFaults({ refusal: { code: "PERIOD_CLOSED", message: "closed" } });
    expect((await post("evt-nc")).status).toBe(200);
  });
});

describe("every refusal code of contract 3 (1c/README.md), as the extension answers it", () => {
  it.each(REFUSAL_CODES)("%s: 422 with the code and 1C's text, nothing stored", async (code) => {
    emulator.setFaults({ refusal: { code, message: `refused: ${code}` } });
    const refused = await post(`evt-${code.toLowerCase()}`);
    expect(refused.status).toBe(422);
    expect(await errorOf(refused)).toEqual({ code, message: `refused: ${code}` });
    expect(emulator.orders()).toHaveLength(0);
  });
});

describe("an error 1C cannot classify", () => {
  it("is 500 application/problem+json PROCESSING_ERROR with 1C's text, not 503, and stores nothing", async () => {
    emulator.setFaults({ processingError: "Поле объекта не обнаружено (ВидЦены)" });
    const failed = await post("evt-pe");
    expect(failed.status).toBe(500);
    expect(failed.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
    expect(failed.headers.get("retry-after")).toBeNull();
    expect(failed.headers.get("x-contract-version")).toBe("3");
    const body = (await failed.json()) as Record<string, unknown>;
    // RFC 9457 §3.1: type, title, status, detail; plus the contract's own error object.
    expect(body).toMatchObject({
      type: expect.stringMatching(/^https:\/\//),
      title: expect.any(String),
      status: 500,
      detail: "Поле объекта не обнаружено (ВидЦены)",
      code: "PROCESSING_ERROR",
      error: { code: "PROCESSING_ERROR", message: "Поле объекта не обнаружено (ВидЦены)" },
    });
    expect(emulator.orders()).toHaveLength(0);
    const status = await fetch(`${emulator.url}/v1/events/evt-pe`);
    expect(status.status).toBe(404);
    emulator.setFaults({ processingError: null });
    expect((await post("evt-pe")).status).toBe(201);
  });

  it("the new faults round-trip through the control endpoint and are checked", async () => {
    const put = (body: unknown) =>
      fetch(`${emulator.url}/_emulator/faults`, {
        method: "PUT",
        headers: { "content-type": JSON_TYPE },
        body: JSON.stringify(body),
      });
    expect((await put({ refusal: { code: "ACCESS_DENIED", message: "no right" }, processingError: "x" })).status).toBe(
      200,
    );
    expect(emulator.faults).toMatchObject({
      refusal: { code: "ACCESS_DENIED", message: "no right" },
      processingError: "x",
    });
    expect((await put({ refusal: { code: "lower", message: "m" } })).status).toBe(400);
    expect((await put({ refusal: { code: "X", message: "" } })).status).toBe(400);
    expect((await put({ refusal: { code: "X", message: "m", extra: 1 } })).status).toBe(400);
    expect((await put({ processingError: "" })).status).toBe(400);
  });
});
