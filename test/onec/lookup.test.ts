/**
 * OnecClient.lookUpEvent: GET {ONEC_URL}/v1/events/{key}, the contract's way to
 * ask 1C what became of a call whose answer never arrived. Against the real
 * emulator, which keeps the contract in 1c/contract/cases.json.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OnecClient } from "../../src/onec/client.ts";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { exampleEvent } from "../support/events.ts";

describe("OnecClient.lookUpEvent against the 1C emulator", () => {
  let onec: OnecEmulator;
  let client: OnecClient;

  beforeAll(async () => {
    onec = await startOnecEmulator({ user: "gw", password: "secret" });
    client = new OnecClient({ baseUrl: onec.url, user: "gw", password: "secret", timeoutMs: 2000 });
  });
  afterAll(async () => {
    await client.close();
    await onec.close();
  });

  it("finds the order 1C created for a named sender's key (sender~event_id)", async () => {
    const key = "shop-a~evt:lookup.1";
    const body = JSON.stringify({ ...exampleEvent(), event_id: "evt:lookup.1" });
    const sent = await client.sendOrderPaid({ idempotencyKey: key, body, correlationId: "corr-lookup" });
    expect(sent.kind).toBe("delivered");
    const order = onec.orders().find((o) => o.key === key)?.order;
    expect(await client.lookUpEvent(key, "corr-lookup-2")).toEqual({ kind: "found", httpStatus: 200, order });
  });

  it("says absent for a key 1C never committed (404 NOT_FOUND)", async () => {
    expect(await client.lookUpEvent("never-sent", "corr-x")).toEqual({ kind: "absent", httpStatus: 404 });
  });

  it("cannot ask with wrong credentials: unknown, never absent", async () => {
    const wrong = new OnecClient({ baseUrl: onec.url, user: "gw", password: "nope", timeoutMs: 2000 });
    try {
      expect(await wrong.lookUpEvent("never-sent", "corr-y")).toMatchObject({ kind: "unknown", httpStatus: 401 });
    } finally {
      await wrong.close();
    }
  });

  it("cannot ask a 1C that is down: unknown ECONNREFUSED", async () => {
    const down = await startOnecEmulator();
    const url = down.url;
    await down.close();
    const gone = new OnecClient({ baseUrl: url, timeoutMs: 2000 });
    try {
      expect(await gone.lookUpEvent("any", "corr-z")).toMatchObject({ kind: "unknown", errorClass: "ECONNREFUSED" });
    } finally {
      await gone.close();
    }
  });
});
