import { describe, expect, it } from "vitest";
import type { EmulatorOrder } from "../../src/onec-emulator/emulator.ts";
import type { Answer, Ledger } from "./client.ts";
import type { Reply } from "./http.ts";
import type { RegisterRow } from "./register.ts";
import { type Evidence, verify } from "./verify.ts";

const ORDER = { id: "8023a5b8-0000-4000-8000-000000000001", number: "ORD-000001" };
const BODY = JSON.stringify({ event_id: "e1", status: "SUCCEEDED", order: ORDER, status_url: "/x/e1" });

function ledger(eventId: string, answers: Answer[]): Ledger {
  const final = answers.find((a) => a.status !== 202);
  return {
    event: { index: 0, eventId, bytes: Buffer.from("{}") },
    answers,
    requests: answers.length,
    connectionErrors: 0,
    unanswered: [],
    final,
  };
}

function row(eventId: string, status: string, lastErrorClass: string | null = null): RegisterRow {
  const succeeded = status === "SUCCEEDED";
  return {
    eventId,
    status,
    orderId: succeeded ? ORDER.id : null,
    orderNumber: succeeded ? ORDER.number : null,
    responseStatus: succeeded ? 201 : null,
    responseBody: succeeded ? BODY : null,
    lastErrorClass,
    attempts: 1,
    finishedAttempts: 1,
  };
}

function journaled(key: string, order = ORDER): EmulatorOrder {
  return { key, hash: "h", order, correlationId: "c", createdAt: "2026-12-01T00:00:00.000Z" };
}

const ok = (body = BODY): Reply => ({ kind: "answer", status: 200, body, retryAfterS: undefined });
const view = (status: string, extra: object = {}): Reply =>
  ok(JSON.stringify({ event_id: "e1", status, order: status === "SUCCEEDED" ? ORDER : null, ...extra }));

/** One event, e1, every account consistent unless a test changes one. */
function evidence(patch: Partial<Evidence> = {}): Evidence {
  const journal = [journaled("shop/e1")];
  return {
    ledgers: [ledger("e1", [{ status: 201, body: BODY, gateway: 0 }])],
    register: new Map([["e1", row("e1", "SUCCEEDED")]]),
    journal,
    onecOrders: journal,
    statusViews: [new Map([["e1", view("SUCCEEDED")]]), new Map([["e1", view("SUCCEEDED")]])],
    resends: [new Map([["e1", ok()]]), new Map([["e1", ok()]])],
    onecKey: (eventId) => `shop/${eventId}`,
    ...patch,
  };
}

describe("the soak's verdict", () => {
  it("finds nothing wrong when every account agrees", () => {
    const findings = verify(evidence());
    expect(findings).toMatchObject({ sent: 1, acknowledged: 1, created: 1 });
    expect(Object.values(findings.counts).every((n) => n === 0)).toBe(true);
  });

  it("counts two orders in 1C for one event as a duplicate", () => {
    const journal = [journaled("shop/e1"), journaled("shop/e1", { id: "other", number: "ORD-000002" })];
    expect(verify(evidence({ journal, onecOrders: journal })).counts.duplicates).toBe(1);
  });

  it("counts an acknowledged event without an order in 1C as lost", () => {
    const findings = verify(
      evidence({
        ledgers: [ledger("e1", [{ status: 202, body: "{}", gateway: 1 }])],
        journal: [],
        onecOrders: [],
        register: new Map([["e1", row("e1", "FAILED_RETRYABLE")]]),
        statusViews: [new Map([["e1", view("FAILED_RETRYABLE")]])],
      }),
    );
    expect(findings.counts).toMatchObject({ lost: 1, stuck: 1 });
  });

  it("counts FAILED_FINAL for an event 1C holds as a disagreement, and its 502 resend", () => {
    const abandoned: Reply = { kind: "answer", status: 502, body: "{}", retryAfterS: undefined };
    const findings = verify(
      evidence({
        ledgers: [ledger("e1", [{ status: 502, body: "{}", gateway: 0 }])],
        register: new Map([["e1", row("e1", "FAILED_FINAL", "crash_loop")]]),
        statusViews: [new Map([["e1", view("FAILED_FINAL", { error_class: "crash_loop" })]])],
        resends: [new Map([["e1", abandoned]])],
      }),
    );
    expect(findings.counts).toMatchObject({ disagreements: 1, resendMismatches: 1, lost: 0, stuck: 0 });
    expect(findings.samples.get("disagreements")?.[0]).toMatch(/crash_loop.*ORD-000001/);
  });

  it("counts an event the shop never got a final answer for as stuck", () => {
    const findings = verify(evidence({ ledgers: [ledger("e1", [{ status: 202, body: "{}", gateway: 0 }])] }));
    expect(findings.counts.stuck).toBe(1);
  });

  it("requires the resends to be the same bytes on both gateways and as during the run", () => {
    const other = BODY.replace("SUCCEEDED", "SUCCEEDED ");
    expect(verify(evidence({ resends: [new Map([["e1", ok()]]), new Map([["e1", ok(other)]])] })).counts).toMatchObject(
      { resendMismatches: 1 },
    );
    const drifted = evidence({ resends: [new Map([["e1", ok(other)]]), new Map([["e1", ok(other)]])] });
    expect(verify(drifted).samples.get("resendMismatches")?.[0]).toMatch(/differs from a 201/);
  });

  it("counts every request left without an answer, and says which they were", () => {
    const slow = ledger("e1", [{ status: 201, body: BODY, gateway: 0 }]);
    slow.unanswered.push("e1.1 to gateway A", "e1.2 to gateway B");
    slow.requests = 3;
    const findings = verify(evidence({ ledgers: [slow] }));
    expect(findings.counts.unanswered).toBe(2);
    expect(findings.samples.get("unanswered")).toEqual([
      "e1: 2 of 3 requests unanswered: e1.1 to gateway A; e1.2 to gateway B",
    ]);
  });

  it("flags a status URL naming another order than 1C's", () => {
    const wrong = ok(JSON.stringify({ status: "SUCCEEDED", order: { id: "x", number: "ORD-000009" } }));
    const findings = verify(
      evidence({ statusViews: [new Map([["e1", view("SUCCEEDED")]]), new Map([["e1", wrong]])] }),
    );
    expect(findings.counts.disagreements).toBe(1);
    expect(findings.samples.get("disagreements")?.[0]).toMatch(/gateway B/);
  });
});
