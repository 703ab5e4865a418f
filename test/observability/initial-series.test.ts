import { beforeAll, describe, expect, it } from "vitest";
import { type DeliveryPolicy, planAttempt, verdictFor } from "../../src/delivery/retry-policy.ts";
import { problems } from "../../src/errors/catalogue.ts";
import type { OnecOutcome } from "../../src/onec/outcome.ts";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { postEvent } from "../support/http.ts";
import { eventRecord, T0 } from "../support/records.ts";
import { type Exposition, type Sample, scrapeMetrics } from "./exposition.ts";

/**
 * rate() and increase() see a series only from its first sample: a series born at 1 hides its first
 * event (issue 25: 14 refusals and 2 conflicts showed as 0). So every label value a counter can take
 * is in the first scrape, at 0, and traffic only moves series that were already there.
 */

const TOKEN_A = "token-of-shop-a-0123456789";
const TOKEN_B = "token-of-shop-b-0123456789";
const SENDERS = ["shop-a", "shop-b"];
// The outcomes and reasons docs/operations.md and the metrics' help name.
const ATTEMPT_OUTCOMES = [
  "delivered",
  "rejected",
  "conflict",
  "errored",
  "unauthorized",
  "retryable",
  "lookup_found",
  "lookup_absent",
  "lookup_unknown",
  "lease_lost",
];
const FAILED_FINAL_REASONS = ["onec_rejected", "onec_conflict", "onec_error", "max_attempts", "max_age", "crash_loop"];
/** The counters whose label values are all known at start; the route and replay-status ones are not. */
const PRESET = [
  "gateway_events_accepted_total",
  "gateway_events_conflicts_total",
  "gateway_events_rejected_total",
  "gateway_delivery_attempts_total",
  "gateway_onec_request_duration_seconds_count",
  "gateway_events_failed_final_total",
];

const h = gatewayWithEmulator({ SENDER_TOKENS: `shop-a:${TOKEN_A},shop-b:${TOKEN_B}` });

function seriesKey(sample: Sample): string {
  return `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
}

/** The samples of `name` with exactly these labels: one when the series exists. */
function found(exposition: Exposition, name: string, labels: Record<string, string>): Sample[] {
  const wanted = seriesKey({ name, labels, value: 0 });
  return exposition.samples.filter((s) => seriesKey(s) === wanted);
}

function missingAtZero(exposition: Exposition, name: string, labelSets: Record<string, string>[]): string[] {
  return labelSets
    .filter((labels) => found(exposition, name, labels).map((s) => s.value)[0] !== 0)
    .map((labels) => `${name} ${JSON.stringify(labels)}`);
}

describe("the first scrape of a gateway with two senders", () => {
  let first: Exposition;
  beforeAll(async () => {
    first = await scrapeMetrics(h.gw.url);
  });

  it("shows each sender's accepted, conflicts and refusals by every problem code of the catalogue at 0", () => {
    const codes = Object.keys(problems);
    expect(codes.length).toBeGreaterThan(20);
    const perSender = SENDERS.map((sender) => ({ sender }));
    expect([
      ...missingAtZero(first, "gateway_events_accepted_total", perSender),
      ...missingAtZero(first, "gateway_events_conflicts_total", perSender),
      ...missingAtZero(
        first,
        "gateway_events_rejected_total",
        SENDERS.flatMap((sender) => codes.map((code) => ({ sender, code }))),
      ),
      // A missing or wrong token is counted before any sender is known.
      ...missingAtZero(first, "gateway_events_rejected_total", [{ sender: "-", code: "GW_ERR_UNAUTHORIZED" }]),
    ]).toEqual([]);
  });

  it("shows every attempt outcome (count and 1C latency) and every FAILED_FINAL reason at 0", () => {
    const outcomes = ATTEMPT_OUTCOMES.map((outcome) => ({ outcome }));
    expect([
      ...missingAtZero(first, "gateway_delivery_attempts_total", outcomes),
      ...missingAtZero(first, "gateway_onec_request_duration_seconds_count", outcomes),
      ...missingAtZero(
        first,
        "gateway_events_failed_final_total",
        FAILED_FINAL_REASONS.map((reason) => ({ reason })),
      ),
    ]).toEqual([]);
  });

  it("has every FAILED_FINAL reason the retry policy decides among them", () => {
    const policy: DeliveryPolicy = {
      baseMs: 1000,
      maxDelayMs: 60_000,
      maxAttempts: 5,
      maxAgeMs: 3_600_000,
      maxUnfinishedAttempts: 3,
      maxOnecErrors: 3,
    };
    const outage: OnecOutcome = { kind: "retryable", errorClass: "timeout", message: "no answer" };
    const reasons = [
      verdictFor(policy, eventRecord(), { kind: "rejected", httpStatus: 422, code: "X", message: "no" }, T0),
      verdictFor(policy, eventRecord(), { kind: "conflict", httpStatus: 409, message: "other body" }, T0),
      verdictFor(
        policy,
        eventRecord(),
        { kind: "errored", httpStatus: 500, code: "E", message: "bug" },
        T0,
        () => 0,
        3,
      ),
      verdictFor(policy, eventRecord({ roundAttempts: 5 }), outage, T0),
      verdictFor(policy, eventRecord({ roundStartedAt: T0 - 3_600_000 }), outage, T0),
      planAttempt(policy, eventRecord({ attempts: 4, finishedAttempts: 0, roundAttempts: 4 })),
    ].map((decided) => {
      const ending = decided.kind === "ask" ? decided.ending : decided.kind === "settle" ? decided.settlement : null;
      return ending?.status === "FAILED_FINAL" ? ending.errorClass : `not final: ${JSON.stringify(decided)}`;
    });
    expect(new Set(reasons)).toEqual(new Set(FAILED_FINAL_REASONS));
    for (const reason of reasons) {
      expect(found(first, "gateway_events_failed_final_total", { reason }), reason).toHaveLength(1);
    }
  });

  it("gets no new series from traffic: refusals, a conflict and 1C's refusal move series already there", async () => {
    const asA = { authorization: `Bearer ${TOKEN_A}` };
    const event = orderPaidEvent();
    expect((await postEvent(h.gw.url, event, asA)).status).toBe(201);
    const changed = structuredClone(event);
    changed.payment.id = "another-payment";
    expect((await postEvent(h.gw.url, changed, asA)).status).toBe(409);
    expect((await postEvent(h.gw.url, "{not json", asA)).status).toBe(400);
    expect(
      (await postEvent(h.gw.url, orderPaidEvent(), { authorization: "Bearer not-a-token-of-anyone" })).status,
    ).toBe(401);
    h.onec.setFaults({ knownSkus: ["NO-SUCH-SKU"] });
    try {
      expect((await postEvent(h.gw.url, orderPaidEvent(), asA)).status).toBe(422); // FAILED_FINAL onec_rejected
    } finally {
      h.onec.setFaults({ knownSkus: null });
    }
    const after = await scrapeMetrics(h.gw.url);

    const before = new Set(first.samples.map(seriesKey));
    const born = after.samples.filter((s) => PRESET.includes(s.name) && !before.has(seriesKey(s))).map(seriesKey);
    expect(born).toEqual([]);
    const moved = after.samples
      .filter((s) => PRESET.includes(s.name) && s.value > 0)
      .map((s) => `${s.name} ${Object.values(s.labels).join(" ")}`);
    expect(moved).toEqual(
      expect.arrayContaining([
        "gateway_events_accepted_total shop-a",
        "gateway_events_conflicts_total shop-a",
        "gateway_events_rejected_total shop-a GW_ERR_INVALID_JSON",
        "gateway_events_rejected_total - GW_ERR_UNAUTHORIZED",
        "gateway_delivery_attempts_total delivered",
        "gateway_delivery_attempts_total rejected",
        "gateway_events_failed_final_total onec_rejected",
      ]),
    );
  });
});
