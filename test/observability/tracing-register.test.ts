import { describe, expect, it } from "vitest";
import { BadLine, eventText, readLine } from "../../src/cli/export-format.ts";
import type { EventRegister, EventSnapshot } from "../../src/register/port.ts";
import { reserveRequest } from "../support/records.ts";
import { registerBackends, registerPerTest } from "../support/register-backends.ts";

/**
 * The trace context is stored WITH the event (inbound_events.trace_context,
 * migration 0008), so an attempt made later, by another process, continues
 * it; and it moves with the event in an export (format version 4).
 */
const STORED = JSON.stringify({
  traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  tracestate: "congo=t61rcWkgMzE",
});

describe.each(registerBackends())("the event's trace context on $name", (backend) => {
  let register: EventRegister;
  registerPerTest(backend, (opened) => {
    register = opened;
  });

  it("is kept with the event, read back by every instance, and left as the first request stored it", async () => {
    const created = await register.reserve(reserveRequest({ eventId: "traced", traceContext: STORED }));
    expect(created.record.traceContext).toBe(STORED);
    // A repeat under another context changes nothing: the event stays in the trace it was accepted under.
    const other = STORED.replace("00f067aa0ba902b7", "b7ad6b7169203331");
    const repeat = await register.reserve(reserveRequest({ eventId: "traced", traceContext: other }));
    expect([repeat.outcome, repeat.record.traceContext]).toEqual(["existing", STORED]);
    const elsewhere = await backend.open();
    expect((await elsewhere.find("default", "traced"))?.traceContext).toBe(STORED);
  });

  it("is absent for an event that came without one, in the same batch as one that had one", async () => {
    const [plain, traced] = await Promise.all([
      register.reserve(reserveRequest({ eventId: "plain" })),
      register.reserve(reserveRequest({ eventId: "with", traceContext: STORED })),
    ]);
    expect(plain.record.traceContext).toBeUndefined();
    expect(traced.record.traceContext).toBe(STORED);
    const claimed = await register.claim({ owner: "w", now: Date.now() + 60_000, leaseMs: 1000, limit: 10 });
    expect(Object.fromEntries(claimed.map((c) => [c.record.eventId, c.record.traceContext ?? null]))).toEqual({
      plain: null,
      with: STORED,
    });
  });

  it("moves with the event through export and import", async () => {
    const { record } = await register.reserve(reserveRequest({ eventId: "moved", traceContext: STORED }));
    // Imported under another id, as if into another register: the import writes the column too.
    const line = readLine(eventText({ record: { ...record, eventId: "moved-copy" }, attempts: [], replays: [] }), 4);
    if (line.type !== "event") throw new Error("an event line reads as an event");
    expect(await register.importEvent(line.snapshot)).toBe("imported");
    expect((await register.find("default", "moved-copy"))?.traceContext).toBe(STORED);
  });
});

describe("export format version 4", () => {
  const snapshot = (traceContext: string | null): EventSnapshot => ({
    record: {
      sender: "default",
      eventId: "evt-1",
      fingerprint: "fp",
      policyVersion: "v1",
      status: "PROCESSING",
      correlationId: "c-1",
      body: "{}",
      response: null,
      order: null,
      lastError: null,
      lastErrorClass: null,
      attempts: 0,
      finishedAttempts: 0,
      roundAttempts: 0,
      roundStartedAt: 1,
      leaseOwner: null,
      leaseToken: 0,
      leaseUntil: null,
      nextAttemptAt: 1,
      receivedAt: 1,
      updatedAt: 1,
      traceContext,
    },
    attempts: [],
    replays: [],
  });

  it("writes each event's trace_context, null when it has none, and reads it back", () => {
    const written = JSON.parse(eventText(snapshot(STORED)));
    expect(written.event.trace_context).toBe(STORED);
    expect(JSON.parse(eventText(snapshot(null))).event.trace_context).toBeNull();
    const read = readLine(eventText(snapshot(STORED)), 4);
    expect(read.type === "event" ? read.snapshot.record.traceContext : undefined).toBe(STORED);
  });

  it("still reads a version 3 event, which has no trace context, and refuses one that claims it has", () => {
    const v4 = JSON.parse(eventText(snapshot(STORED)));
    const { trace_context: _dropped, ...v3Event } = v4.event;
    const read = readLine(JSON.stringify({ ...v4, event: v3Event }), 3);
    expect(read.type === "event" ? read.snapshot.record.traceContext : "not an event").toBeUndefined();
    expect(() => readLine(JSON.stringify(v4), 3)).toThrow(BadLine);
    // Version 4 requires the key: null says "none", absence says the line is not version 4's.
    expect(() => readLine(JSON.stringify({ ...v4, event: v3Event }), 4)).toThrow(BadLine);
  });
});
