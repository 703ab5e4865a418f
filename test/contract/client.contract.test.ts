/**
 * The gateway side of the 1C contract: OnecClient sends the contract's event
 * POSTs to the emulator, and the outcome classifyResponse gives each answer
 * must mean what the case's expected status means. If the client and the
 * contract disagree (a 409 read as retryable, a 200 without the order...), this fails.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OnecClient } from "../../src/onec/client.ts";
import { type ContractCase, loadContract } from "../../src/onec/contract/cases.ts";
import { checkValue } from "../../src/onec/contract/compare.ts";
import { getPath } from "../../src/onec/contract/json-path.ts";
import { ContractSession, type PreparedRequest } from "../../src/onec/contract/run-contract.ts";
import type { OnecOutcome } from "../../src/onec/outcome.ts";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { parseFaultsPatch } from "../../src/onec-emulator/faults.ts";
import { EXAMPLE_SKUS } from "./support.ts";

const ORDERS_PAID = "/v1/orders/paid";
/** What OnecClient always puts on the wire. */
const CLIENT_CONTENT_TYPE = "application/json; charset=utf-8";

/**
 * What an expected answer means for the gateway: the outcome kind it must come to. Only a 500 that is
 * 1C's own PROCESSING_ERROR problem is 1C failing on the event (contract 3); any other 5xx is an outage.
 */
function outcomeKindFor(status: number, code?: unknown): OnecOutcome["kind"] {
  if (status === 500 && code === "PROCESSING_ERROR") return "errored";
  if (status === 200 || status === 201) return "delivered";
  if (status === 409) return "conflict";
  if (status === 400 || status === 422) return "rejected";
  if (status === 401 || status === 403) return "unauthorized";
  if (status === 503 || status === 429 || status >= 500) return "retryable";
  throw new Error(`the contract gives no outcome for status ${status}: extend outcomeKindFor`);
}

/**
 * The client can only send a request with a key and a JSON content type: a case
 * that leaves the key out or declares text is about 1C's checks, not the client's.
 */
function clientCanSend(request: PreparedRequest): boolean {
  return (
    request.method === "POST" &&
    request.path === ORDERS_PAID &&
    request.headers["idempotency-key"] !== undefined &&
    request.headers["content-type"] === CLIENT_CONTENT_TYPE
  );
}

/** The answer as the client saw it, for later cases' {{case.body.…}} references. */
function answerText(outcome: OnecOutcome): string {
  if (outcome.kind === "delivered") return JSON.stringify({ order: outcome.order });
  if (outcome.kind === "rejected" || outcome.kind === "errored") {
    return JSON.stringify({ error: { code: outcome.code, message: outcome.message } });
  }
  return "{}";
}

describe("OnecClient and the 1C contract agree", () => {
  let emulator: OnecEmulator;
  let client: OnecClient;

  beforeEach(async () => {
    emulator = await startOnecEmulator({ faults: { knownSkus: [...EXAMPLE_SKUS] } });
    client = new OnecClient({ baseUrl: emulator.url, timeoutMs: 5_000 });
  });
  afterEach(async () => {
    await client.close();
    await emulator.close();
  });

  async function send(request: PreparedRequest): Promise<OnecOutcome> {
    const key = request.headers["idempotency-key"];
    if (key === undefined) throw new Error("no idempotency key to send");
    return client.sendOrderPaid({
      idempotencyKey: key,
      body: request.body ?? "",
      correlationId: request.headers["x-correlation-id"] ?? "client-contract",
    });
  }

  /** A staged case runs with the emulator's faults it names, and they are off again after it. */
  async function sendStaged(contractCase: ContractCase, request: PreparedRequest): Promise<OnecOutcome> {
    if (contractCase.stage === undefined) return send(request);
    const before = emulator.faults;
    const staged = parseFaultsPatch(contractCase.stage.emulator);
    if (!staged.ok) throw new Error(`${contractCase.name}: ${staged.message}`);
    emulator.setFaults(staged.patch);
    try {
      return await send(request);
    } finally {
      emulator.setFaults(before);
    }
  }

  it("gives each event POST of the contract the outcome its expected status means", async () => {
    const session = new ContractSession();
    const sent: string[] = [];
    const skipped: string[] = [];
    for (const contractCase of loadContract()) {
      const { request, expect: expected } = session.prepare(contractCase);
      if (!clientCanSend(request)) {
        skipped.push(contractCase.name);
        continue;
      }
      const outcome = await sendStaged(contractCase, request);
      session.record(contractCase.name, {
        status: outcome.httpStatus ?? 0,
        headers: {},
        bodyText: answerText(outcome),
      });
      sent.push(contractCase.name);

      const where = `${contractCase.name}: ${JSON.stringify(outcome)}`;
      expect(outcome.kind, where).toBe(outcomeKindFor(expected.status, expected.body.code));
      expect(outcome.httpStatus, where).toBe(expected.status);
      // The values the case pins and the outcome carries (a repeat's order, a rejection's code) are the ones
      // the client read. A conflict carries no code: 409 alone means EVENT_ID_REUSED to the gateway.
      for (const [path, expectation] of Object.entries(expected.body)) {
        if (outcome.kind === "delivered" && path.startsWith("order.")) {
          expect(checkValue(expectation, getPath({ order: outcome.order }, path)), `${where}: ${path}`).toBeUndefined();
        }
        if ((outcome.kind === "rejected" || outcome.kind === "errored") && path === "error.code") {
          expect(checkValue(expectation, outcome.code), `${where}: ${path}`).toBeUndefined();
        }
      }
    }
    // Listed so a new case cannot drop out of this check unnoticed.
    expect(sent).toEqual([
      "first-delivery",
      "repeat",
      "repeat-without-correlation-id",
      "reused-key-other-body",
      "unknown-article",
      "rejected-key-other-body",
      "malformed-json",
      "key-outside-alphabet",
      "key-dot",
      "key-dot-dot",
      "date-past-1c-range",
      "currency-of-no-agreement",
      "refused-customer-not-client",
      "processing-error",
    ]);
    expect(skipped).toEqual([
      "health",
      "status-of-rejected",
      "missing-idempotency-key",
      "not-json-content-type",
      "status-of-currency-mismatch",
      "status-of-processing-error",
      "status-of-delivered",
      "status-of-other-case-key",
      "status-of-unknown",
    ]);
    expect(emulator.orders()).toHaveLength(1);
  });

  it("the repeat is delivered with the first delivery's order, not a new one", async () => {
    const session = new ContractSession();
    const first = caseNamed("first-delivery");
    const repeat = caseNamed("repeat");
    const firstOutcome = await send(session.prepareRequest(first));
    const repeatOutcome = await send(session.prepareRequest(repeat));
    expect(firstOutcome).toMatchObject({ kind: "delivered", httpStatus: 201 });
    expect(repeatOutcome).toEqual({
      kind: "delivered",
      httpStatus: 200,
      order: firstOutcome.kind === "delivered" ? firstOutcome.order : undefined,
    });
  });

  it("a 1C that is unavailable (503 + Retry-After) is retryable, after the time it asks for", async () => {
    emulator.setFaults({ unavailable: true, retryAfterSeconds: 7 });
    const outcome = await send(new ContractSession().prepareRequest(caseNamed("first-delivery")));
    expect(outcome.kind).toBe(outcomeKindFor(503));
    expect(outcome).toMatchObject({ httpStatus: 503, retryAfterMs: 7_000 });
    expect(emulator.orders()).toHaveLength(0);
  });

  it("1C in maintenance (503 MAINTENANCE + Retry-After) is retryable, after the time it asks for", async () => {
    emulator.setFaults({ maintenance: true, retryAfterSeconds: 300 });
    const outcome = await send(new ContractSession().prepareRequest(caseNamed("first-delivery")));
    expect(outcome).toMatchObject({ kind: outcomeKindFor(503), httpStatus: 503, retryAfterMs: 300_000 });
    expect(emulator.orders()).toHaveLength(0);
  });

  it("1C refusing to post the order (422 ORDER_NOT_VALID) is a final rejection carrying 1C's code and reason", async () => {
    emulator.setFaults({ orderNotValid: "Не рассчитаны автоматические скидки" });
    const outcome = await send(new ContractSession().prepareRequest(caseNamed("first-delivery")));
    expect(outcome).toMatchObject({ kind: outcomeKindFor(422), httpStatus: 422, code: "ORDER_NOT_VALID" });
    expect(outcome.kind === "rejected" ? outcome.message : "").toContain("Не рассчитаны автоматические скидки");
  });

  it("1C failing on an error it cannot classify (500 PROCESSING_ERROR) is its own outcome carrying 1C's text", async () => {
    emulator.setFaults({ processingError: "Поле объекта не обнаружено (ВидЦены)" });
    const outcome = await send(new ContractSession().prepareRequest(caseNamed("first-delivery")));
    expect(outcome).toEqual({
      kind: "errored",
      httpStatus: 500,
      code: "PROCESSING_ERROR",
      message: "Поле объекта не обнаружено (ВидЦены)",
    });
    expect(emulator.orders()).toHaveLength(0);
  });
});

function caseNamed(name: string): ContractCase {
  const found = loadContract().find((c) => c.name === name);
  if (found === undefined) throw new Error(`no contract case "${name}"`);
  return found;
}
