import { describe, expect, it } from "vitest";
import { OrderPaidIntake } from "../../src/accept/order-paid-intake.ts";
import { type Canonical, canonicalizeEvent } from "../../src/domain/fingerprint.ts";
import { exampleEvent } from "../support/events.ts";

/**
 * The cheapest path (issue 23): a repeat whose bytes hash-match bytes
 * already admitted is answered without the parse, the schema or the
 * canonical form. Counted, not timed: the canonical form is the stage a
 * repeat used to pay most for.
 */
function countingIntake(knownBodies?: number) {
  const calls = { canonicalize: 0 };
  const canonicalize = (value: unknown): Canonical => {
    calls.canonicalize += 1;
    return canonicalizeEvent(value);
  };
  return {
    intake: new OrderPaidIntake({ canonicalize, ...(knownBodies === undefined ? {} : { knownBodies }) }),
    calls,
  };
}

const bytes = (value: unknown, space?: number) => Buffer.from(JSON.stringify(value, null, space));

function admitted(intake: OrderPaidIntake, raw: Buffer, key?: string) {
  const result = intake.admit(raw, key);
  if (!result.ok) throw new Error(`refused: ${result.code} ${result.detail}`);
  return result;
}

describe("OrderPaidIntake: bytes already admitted", () => {
  it("admits a repeat of the same bytes without canonicalising it again, to the same fingerprint and event_id", () => {
    const { intake, calls } = countingIntake();
    const event = { ...exampleEvent(), event_id: "intake-1" };
    const first = admitted(intake, bytes(event));
    expect(calls.canonicalize).toBe(1);
    const repeat = admitted(intake, bytes(event));
    expect(calls.canonicalize).toBe(1);
    expect(repeat.eventId).toBe("intake-1");
    expect(repeat.canonical.fingerprint).toBe(first.canonical.fingerprint);
    expect(repeat.canonical.policy).toBe(first.canonical.policy);
  });

  it("reads other bytes of the same event in full, and RFC 8785 gives them the same fingerprint", () => {
    const { intake, calls } = countingIntake();
    const event = { ...exampleEvent(), event_id: "intake-2" };
    const compact = admitted(intake, bytes(event));
    const indented = admitted(intake, bytes(event, 2));
    expect(calls.canonicalize).toBe(2);
    expect(indented.canonical.fingerprint).toBe(compact.canonical.fingerprint);
  });

  it("still checks Idempotency-Key against the remembered event_id", () => {
    const { intake } = countingIntake();
    const raw = bytes({ ...exampleEvent(), event_id: "intake-3" });
    admitted(intake, raw);
    expect(intake.admit(raw, "another-key")).toMatchObject({
      ok: false,
      code: "GW_ERR_IDEMPOTENCY_KEY_MISMATCH",
      eventId: "intake-3",
    });
    expect(admitted(intake, raw, "intake-3").eventId).toBe("intake-3");
    // The IETF draft's structured-field form of the same key.
    expect(admitted(intake, raw, '"intake-3"').eventId).toBe("intake-3");
  });

  it("gives a repeat's canonical text only when asked, read again from its bytes: the text a first request stored", () => {
    const { intake, calls } = countingIntake();
    const raw = bytes({ ...exampleEvent(), event_id: "intake-4" });
    const first = admitted(intake, raw);
    const repeat = admitted(intake, raw);
    expect(calls.canonicalize).toBe(1);
    expect(repeat.canonical.text).toBe(first.canonical.text);
    expect(calls.canonicalize).toBe(2);
  });

  it("does not remember refused bodies: each is refused again, in full", () => {
    const { intake, calls } = countingIntake();
    const raw = bytes({ ...exampleEvent(), event_id: "intake-5", order: "not an object" });
    for (let i = 0; i < 2; i++)
      expect(intake.admit(raw, undefined)).toMatchObject({ ok: false, code: "GW_ERR_SCHEMA_VIOLATION" });
    expect(calls.canonicalize).toBe(0);
    expect(intake.admit(Buffer.from('{"event_id":"a","event_id":"b"}'), undefined)).toMatchObject({
      ok: false,
      code: "GW_ERR_DUPLICATE_JSON_KEY",
    });
  });

  it("forgets the oldest bodies past its capacity", () => {
    const { intake, calls } = countingIntake(1);
    const a = bytes({ ...exampleEvent(), event_id: "intake-a" });
    const b = bytes({ ...exampleEvent(), event_id: "intake-b" });
    admitted(intake, a);
    admitted(intake, b);
    admitted(intake, b);
    expect(calls.canonicalize).toBe(2);
    admitted(intake, a);
    expect(calls.canonicalize).toBe(3);
  });

  it("remembers nothing when its capacity is 0", () => {
    const { intake, calls } = countingIntake(0);
    const raw = bytes({ ...exampleEvent(), event_id: "intake-0" });
    admitted(intake, raw);
    admitted(intake, raw);
    expect(calls.canonicalize).toBe(2);
  });
});
