import { describe, expect, it } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import { refusalSnapshot, successSnapshot } from "../../src/domain/first-answer.ts";
import { answerFor } from "../../src/http/answers.ts";
import { eventRecord, T0 } from "../support/records.ts";

const NOW = T0;
const record = eventRecord;

const order = { id: "7b1c", number: "ORD-000001" };

describe("answerFor: the one state-to-answer map", () => {
  it("answers the first success 201 and a repeat 200 with the same bytes", () => {
    const snapshot = successSnapshot("evt-1", order);
    const done = record({ status: EventStatus.SUCCEEDED, response: snapshot, order, leaseUntil: null });
    const first = answerFor({ kind: "event", record: done, firstAnswer: true }, "c-2", NOW);
    const repeat = answerFor({ kind: "event", record: done, firstAnswer: false }, "c-3", NOW);
    expect([first.status, first.headers["idempotent-replayed"]]).toEqual([201, "false"]);
    expect([repeat.status, repeat.headers["idempotent-replayed"]]).toEqual([200, "true"]);
    expect(repeat.body).toBe(first.body);
    expect(JSON.parse(first.body)).toEqual({
      event_id: "evt-1",
      status: "SUCCEEDED",
      order,
      status_url: "/integration/v1/orders/paid/evt-1",
    });
    // docs/api.md: the status URL is GET /integration/v1/orders/paid/{event_id}, and Location names it.
    expect(first.headers.location).toBe("/integration/v1/orders/paid/evt-1");
  });

  it("answers a 1C refusal 422 every time, replayed the second time", () => {
    const snapshot = refusalSnapshot("evt-1", "GW_ERR_ONEC_REJECTED", "no", { code: "UNKNOWN_SKU", message: "x" }, "c");
    const refused = record({ status: EventStatus.FAILED_FINAL, response: snapshot, leaseUntil: null });
    const first = answerFor({ kind: "event", record: refused, firstAnswer: true }, "c", NOW);
    const repeat = answerFor({ kind: "event", record: refused, firstAnswer: false }, "c", NOW);
    expect([first.status, repeat.status]).toEqual([422, 422]);
    expect(repeat.headers["idempotent-replayed"]).toBe("true");
    expect(first.contentType).toMatch(/^application\/problem\+json/);
  });

  it("answers a pending event 202 with the status URL and Retry-After", () => {
    const inFlight = answerFor({ kind: "event", record: record({}), firstAnswer: false }, "c", NOW);
    expect(inFlight.status).toBe(202);
    expect(inFlight.headers["retry-after"]).toBe("1");
    expect(JSON.parse(inFlight.body)).toEqual({
      event_id: "evt-1",
      status: "PROCESSING",
      status_url: "/integration/v1/orders/paid/evt-1",
    });
    const waiting = record({ status: EventStatus.FAILED_RETRYABLE, leaseUntil: null, nextAttemptAt: NOW + 4200 });
    expect(answerFor({ kind: "event", record: waiting, firstAnswer: true }, "c", NOW).headers["retry-after"]).toBe("5");
  });

  it("answers a fingerprint conflict 409 problem, whatever the state", () => {
    for (const status of Object.values(EventStatus)) {
      const answer = answerFor({ kind: "conflict", record: record({ status }) }, "c-9", NOW);
      expect(answer.status).toBe(409);
      expect(JSON.parse(answer.body)).toMatchObject({
        type: "/integration/v1/problems/event-id-conflict",
        status: 409,
        correlation_id: "c-9",
      });
    }
  });
});
