import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Deliverer, type DelivererOptions } from "../../src/delivery/deliverer.ts";
import type { DeliveryPolicy } from "../../src/delivery/retry-policy.ts";
import type { OrderPaidDelivery } from "../../src/onec/client.ts";
import type { OnecEventLookup, OnecOutcome } from "../../src/onec/outcome.ts";
import type { EventRegister } from "../../src/register/port.ts";
import { drivenOptions, recordEvent, silentLog, testPolicy } from "../support/deliverers.ts";
import { T0 } from "../support/records.ts";
import { registerBackends } from "../support/register-backends.ts";

const order = { id: "o-1", number: "ORD-1" };
const delivered: OnecOutcome = { kind: "delivered", httpStatus: 201, order };
const busy: OnecOutcome = { kind: "retryable", httpStatus: 503, errorClass: "http_503", message: "busy" };

const absent: OnecEventLookup = { kind: "absent", httpStatus: 404 };

/** A 1C stand-in whose answers the test decides, call by call; lookups say "absent" unless told otherwise. */
function scriptedOnec(
  answer: (call: number, delivery: OrderPaidDelivery) => OnecOutcome | Promise<OnecOutcome>,
  lookUp: (lookup: number, key: string) => OnecEventLookup = () => absent,
) {
  const calls: OrderPaidDelivery[] = [];
  const lookups: string[] = [];
  let running = 0;
  let maxRunning = 0;
  return {
    calls,
    lookups,
    maxRunning: () => maxRunning,
    client: {
      lookUpEvent: async (key: string) => {
        lookups.push(key);
        return lookUp(lookups.length, key);
      },
      sendOrderPaid: async (delivery: OrderPaidDelivery) => {
        calls.push(delivery);
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        try {
          return await answer(calls.length, delivery);
        } finally {
          running -= 1;
        }
      },
    },
  };
}

function deferred<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** `register` with one method replaced; `replacement` gets the real register to call through to. */
function withMethod<K extends "claim" | "settle">(
  register: EventRegister,
  name: K,
  replacement: (real: EventRegister, ...args: Parameters<EventRegister[K]>) => ReturnType<EventRegister[K]>,
): EventRegister {
  return new Proxy(register, {
    get(target, property, receiver) {
      if (property === name) return (...args: Parameters<EventRegister[K]>) => replacement(target, ...args);
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe.each(registerBackends())("Deliverer (fake clock, real register on $name)", (backend) => {
  let register: EventRegister;
  let now: number;
  const running: Deliverer[] = [];

  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());
  beforeEach(async () => {
    await backend.reset();
    register = await backend.open();
    now = T0;
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((d) => d.stop()));
    await backend.closeAll();
  });

  function deliverer(
    onec: ReturnType<typeof scriptedOnec>,
    options: Partial<DelivererOptions> = {},
    on: EventRegister = register,
    overrides: Partial<DeliveryPolicy> = {},
  ): Deliverer {
    const d = new Deliverer(
      { register: on, onec: onec.client, policy: { ...testPolicy, ...overrides }, now: () => now, log: silentLog },
      drivenOptions(options),
    );
    running.push(d);
    d.start();
    return d;
  }

  async function step(d: Deliverer): Promise<void> {
    await d.pump();
    await d.idle();
  }

  const accept = (eventId: string) => recordEvent(register, eventId, now);

  it("backs off exponentially with jitter, then ends the event in FAILED_FINAL, never dropping it", async () => {
    const onec = scriptedOnec(() => busy);
    const d = deliverer(onec);
    await accept("evt-1");
    const delays: number[] = [];
    for (;;) {
      await step(d);
      const record = await register.find("default", "evt-1");
      if (record?.status !== "FAILED_RETRYABLE") break;
      delays.push((record.nextAttemptAt ?? 0) - now);
      now = record.nextAttemptAt ?? now;
    }
    expect(onec.calls).toHaveLength(5);
    // 1C was asked, and said it never committed the event, before the gateway gave up on it.
    expect(onec.lookups).toEqual(["evt-1"]);
    // maxAttempts 5: a delay after each of the first four attempts, none after the fifth (the last).
    expect(delays).toHaveLength(4);
    delays.forEach((delay, i) => {
      expect(delay).toBeGreaterThanOrEqual(0.8 * 1000 * 2 ** i);
      expect(delay).toBeLessThanOrEqual(1.2 * 1000 * 2 ** i);
    });
    const final = await register.find("default", "evt-1");
    expect(final).toMatchObject({ status: "FAILED_FINAL", lastErrorClass: "max_attempts", attempts: 5 });
    expect(final?.response?.status).toBe(502);
    expect(new Set(onec.calls.map((c) => c.body)).size).toBe(1);
    expect(onec.calls.every((c) => c.idempotencyKey === "evt-1" && c.correlationId === "corr-evt-1")).toBe(true);
  });

  it("ends an event 1C keeps failing on (PROCESSING_ERROR) at its 3rd such answer, outages not counted; a replay starts a new budget", async () => {
    const failed: OnecOutcome = {
      kind: "errored",
      httpStatus: 500,
      code: "PROCESSING_ERROR",
      message: "1C: no price type",
    };
    // An outage, then 1C's errors: the outage is not charged to the error budget.
    const onec = scriptedOnec((call) => (call === 1 ? busy : failed));
    const d = deliverer(onec);
    await accept("evt-pe");
    const statuses: string[] = [];
    for (;;) {
      await step(d);
      const record = await register.find("default", "evt-pe");
      statuses.push(`${record?.status}:${record?.lastErrorClass}`);
      if (record?.status !== "FAILED_RETRYABLE") break;
      now = record.nextAttemptAt ?? now;
    }
    expect(statuses).toEqual([
      "FAILED_RETRYABLE:http_503",
      "FAILED_RETRYABLE:onec_error",
      "FAILED_RETRYABLE:onec_error",
      "FAILED_FINAL:onec_error",
    ]);
    // Asked once, before the ending: the scripted 1C says it has no order for the key.
    expect(onec.lookups).toEqual(["evt-pe"]);
    const final = await register.find("default", "evt-pe");
    expect(final?.lastError).toContain("1C failed to process it 3 times; 1C said: 1C: no price type");
    expect(final?.response?.status).toBe(502);
    const attempts = await register.listAttempts("default", "evt-pe");
    expect(attempts.map((a) => [a.outcome, a.errorClass])).toEqual([
      ["retryable", "http_503"],
      ["errored", "PROCESSING_ERROR"],
      ["errored", "PROCESSING_ERROR"],
      ["errored", "PROCESSING_ERROR"],
    ]);

    // Replayed while 1C still fails: the errors of the last round do not end the new one at its first.
    const replayed = await register.replay({
      sender: "default",
      eventId: "evt-pe",
      requestedBy: "support",
      reason: "try again",
      force: false,
      now,
    });
    expect(replayed.kind).toBe("replayed");
    await step(d);
    expect(await register.find("default", "evt-pe")).toMatchObject({
      status: "FAILED_RETRYABLE",
      lastErrorClass: "onec_error",
    });
  });

  it("does not end an event on 1C's errors when 1C holds its order: an error after 1C's commit is a PROCESSING_ERROR too", async () => {
    const failed: OnecOutcome = { kind: "errored", httpStatus: 500, code: "PROCESSING_ERROR", message: "журнал" };
    const onec = scriptedOnec(
      () => failed,
      () => ({ kind: "found", httpStatus: 200, order }),
    );
    const d = deliverer(onec);
    await accept("evt-pe-held");
    for (;;) {
      await step(d);
      const record = await register.find("default", "evt-pe-held");
      if (record?.status !== "FAILED_RETRYABLE") break;
      now = record.nextAttemptAt ?? now;
    }
    expect(onec.calls).toHaveLength(3);
    expect(onec.lookups).toEqual(["evt-pe-held"]);
    expect(await register.find("default", "evt-pe-held")).toMatchObject({ status: "SUCCEEDED", order });
  });

  it("keeps at most ONEC_MAX_CONCURRENCY calls in flight", async () => {
    const gates = Array.from({ length: 10 }, () => deferred<OnecOutcome>());
    const onec = scriptedOnec((call) => (gates[call - 1] as ReturnType<typeof deferred<OnecOutcome>>).promise);
    const d = deliverer(onec, { concurrency: 4 });
    for (let i = 0; i < 10; i++) await accept(`evt-${i}`);
    await d.pump();
    expect(onec.calls).toHaveLength(4);
    for (const gate of gates) gate.resolve(delivered);
    // Each finished call wakes the deliverer to fill its slot again.
    while (onec.calls.length < 10 || d.inFlight > 0) await d.idle().then(() => d.pump());
    expect(onec.maxRunning()).toBe(4);
    expect(await register.list({ status: "SUCCEEDED", limit: 100 })).toHaveLength(10);
  });

  it("gives a call's slot to the next event once 1C has answered, while the outcome is still being written", async () => {
    const secondCall = deferred<void>();
    let written = 0;
    const writtenAtSecondCall: number[] = [];
    const onec = scriptedOnec((call) => {
      if (call === 2) {
        writtenAtSecondCall.push(written);
        secondCall.resolve();
      }
      return delivered;
    });
    const writeOutcomes = deferred<void>();
    // The register, with every outcome's write held until the test lets it go.
    const slowSettles = withMethod(register, "settle", async (real, ...args) => {
      await writeOutcomes.promise;
      const record = await real.settle(...args);
      written++;
      return record;
    });
    const d = deliverer(onec, { concurrency: 1 }, slowSettles);
    await accept("evt-1");
    await accept("evt-2");
    await d.pump();
    // Held writes would hold the second call forever if the slot waited for them: bounded, then let go.
    await Promise.race([secondCall.promise, new Promise((resolve) => setTimeout(resolve, 2000))]);
    writeOutcomes.resolve();
    await d.idle();
    while (onec.calls.length < 2 || d.inFlight > 0) await d.idle().then(() => d.pump());
    // With the cap at 1, the second call started before the first outcome was written.
    expect(writtenAtSecondCall).toEqual([0]);
    expect(onec.maxRunning()).toBe(1);
    expect((await register.list({ status: "SUCCEEDED", limit: 10 })).map((r) => r.eventId)).toEqual(["evt-1", "evt-2"]);
  });

  it("claims the events it is asked to hurry together, not one claim after another", async () => {
    const gate = deferred<OnecOutcome>();
    const onec = scriptedOnec(() => gate.promise);
    const generalClaimsHeld = deferred<void>();
    let outstanding = 0;
    let most = 0;
    // The register with its claims watched: a claim for particular events is counted while it runs; the
    // claim of whatever is due finds nothing, and the first one waits until the test lets it go.
    const watched = withMethod(register, "claim", async (real, request) => {
      if (request.only === undefined) {
        await generalClaimsHeld.promise;
        return [];
      }
      outstanding++;
      most = Math.max(most, outstanding);
      try {
        return await real.claim(request);
      } finally {
        outstanding--;
      }
    });
    const ids = ["evt-1", "evt-2", "evt-3", "evt-4"];
    for (const eventId of ids) await accept(eventId);
    const d = deliverer(onec, { concurrency: 8 }, watched);
    // Asked while its first claim is still out: all four wait for the next round, which takes them.
    for (const eventId of ids) d.expedite("default", eventId);
    generalClaimsHeld.resolve();
    while (onec.calls.length < 4) await d.pump();
    expect(most).toBe(4);
    gate.resolve(delivered);
    await d.idle();
    expect(onec.calls.map((call) => call.idempotencyKey).sort()).toEqual(ids);
  });

  it("asked to hurry an event it is already calling 1C about, makes no claim for it", async () => {
    const gate = deferred<OnecOutcome>();
    const onec = scriptedOnec(() => gate.promise);
    const claimsFor: string[] = [];
    const watched = withMethod(register, "claim", (real, request) => {
      if (request.only !== undefined) claimsFor.push(request.only.eventId);
      return real.claim(request);
    });
    const d = deliverer(onec, {}, watched);
    await accept("evt-1");
    while (onec.calls.length === 0) await d.pump();
    const before = claimsFor.length;
    d.expedite("default", "evt-1");
    await d.pump();
    expect(claimsFor.length).toBe(before);
    gate.resolve(delivered);
    await d.idle();
    // Once its attempt is over, the event can be hurried again (a replay puts it back to pending).
    d.expedite("default", "evt-1");
    await d.pump();
    expect(claimsFor.slice(before)).toEqual(["evt-1"]);
    expect(onec.calls).toHaveLength(1);
  });

  it("opens the breaker after consecutive failures: stops claiming without spending waiting events' attempts", async () => {
    let up = false;
    const onec = scriptedOnec(() => (up ? delivered : busy));
    const d = deliverer(onec, {
      concurrency: 1,
      breaker: { failureThreshold: 2, cooldownMs: 10_000, maxCooldownMs: 60_000 },
    });
    for (let i = 0; i < 5; i++) await accept(`evt-${i}`);
    await step(d);
    expect(onec.calls).toHaveLength(2);
    expect(d.breakerState).toBe("open");
    const untouched = await register.list({ status: "PROCESSING", limit: 10 });
    expect(untouched.map((r) => r.attempts)).toEqual([0, 0, 0]);

    now += 9_999;
    await step(d);
    expect(onec.calls).toHaveLength(2);

    up = true;
    now += 1;
    await step(d); // the probe succeeds, the breaker closes, the rest follow
    while (d.inFlight > 0 || (await register.list({ status: "PROCESSING", limit: 1 })).length > 0) await step(d);
    expect(d.breakerState).toBe("closed");
    // The two that failed were tried again; the three that waited out the outage needed one attempt each.
    expect((await register.list({ status: "SUCCEEDED", limit: 10 })).map((r) => r.attempts)).toEqual([2, 2, 1, 1, 1]);
  });

  it("when 1C answers again after an outage, retries it held back go at once, not after their backoff", async () => {
    let up = false;
    const onec = scriptedOnec(() => (up ? delivered : busy));
    const d = deliverer(
      onec,
      { concurrency: 1, breaker: { failureThreshold: 1, cooldownMs: 1000, maxCooldownMs: 3000 } },
      register,
      { baseMs: 60_000 },
    );
    await accept("held-back");
    await step(d);
    const waiting = await register.find("default", "held-back");
    expect(waiting?.nextAttemptAt).toBeGreaterThanOrEqual(now + 48_000);
    expect(d.breakerState).toBe("open");

    up = true;
    now += 1000;
    await accept("probe");
    const heldBackDelivered = new Promise<void>((resolve) => {
      d.on("settled", (record) => {
        if (record.eventId === "held-back" && record.status === "SUCCEEDED") resolve();
      });
    });
    await step(d); // the probe succeeds and closes the breaker
    await heldBackDelivered;
    expect(d.breakerState).toBe("closed");
    expect(await register.find("default", "held-back")).toMatchObject({ status: "SUCCEEDED", attempts: 2 });
  });

  it("brings retries forward at one recovery per RETRY_MAX_DELAY_MS: a 1C that flaps does not spend their budget", async () => {
    // 1C's answers call by call: it fails the event, answers a probe, fails the event brought forward,
    // answers the next probe; ten minutes on, it fails the event, answers a probe, takes the event.
    const script = [busy, delivered, busy, delivered, busy, delivered, delivered];
    const onec = scriptedOnec((call) => script[call - 1] ?? delivered);
    const d = deliverer(
      onec,
      { concurrency: 1, breaker: { failureThreshold: 1, cooldownMs: 1000, maxCooldownMs: 1000 } },
      register,
      { baseMs: 10_000, maxDelayMs: 600_000 },
    );
    const attemptsOf = (eventId: string, attempts: number) =>
      new Promise<void>((resolve) => {
        d.on("attempted", (notice) => {
          if (notice.record.eventId === eventId && notice.record.attempts === attempts) resolve();
        });
      });
    await accept("held-back");
    await step(d);
    expect(d.breakerState).toBe("open");

    now += 1000;
    await accept("probe-1");
    const broughtForward = attemptsOf("held-back", 2);
    await step(d); // the probe closes the breaker; held-back, brought forward, fails and opens it again
    await broughtForward;
    await d.idle();
    expect(d.breakerState).toBe("open");
    const waiting = await register.find("default", "held-back");
    expect(waiting).toMatchObject({ status: "FAILED_RETRYABLE", attempts: 2 });

    now += 1000;
    await accept("probe-2");
    await step(d);
    await step(d);
    expect(d.breakerState).toBe("closed");
    // The second recovery, within RETRY_MAX_DELAY_MS of the first, left held-back's backoff (16 s or more) alone.
    expect(await register.find("default", "held-back")).toMatchObject({
      status: "FAILED_RETRYABLE",
      attempts: 2,
      nextAttemptAt: waiting?.nextAttemptAt,
    });
    expect(onec.calls.map((call) => call.idempotencyKey)).toEqual(["held-back", "probe-1", "held-back", "probe-2"]);

    // Past RETRY_MAX_DELAY_MS, held-back is due by its own schedule and fails; the next recovery brings it forward.
    now += 600_000;
    await step(d);
    expect(d.breakerState).toBe("open");
    now += 1000;
    await accept("probe-3");
    const deliveredAtLast = attemptsOf("held-back", 4);
    await step(d);
    await deliveredAtLast;
    await d.idle();
    expect(await register.find("default", "held-back")).toMatchObject({ status: "SUCCEEDED", attempts: 4 });
    expect(onec.calls.map((call) => call.idempotencyKey).slice(4)).toEqual(["held-back", "probe-3", "held-back"]);
  });

  /** An event whose earlier attempts timed out, charged, due again at `dueAt`. */
  async function failedBefore(eventId: string, attempts: number, dueAt: number): Promise<void> {
    await accept(eventId);
    for (let attempt = 0; attempt < attempts; attempt++) {
      const [claim] = await register.claim({
        owner: "earlier",
        now,
        leaseMs: 1000,
        limit: 1,
        only: { sender: "default", eventId },
      });
      if (claim === undefined) throw new Error(`could not claim ${eventId}`);
      await register.settle(
        claim.lease,
        {
          status: "FAILED_RETRYABLE",
          error: "timeout",
          errorClass: "timeout",
          nextAttemptAt: attempt === attempts - 1 ? dueAt : now,
          charged: true,
        },
        { startedAt: now, durationMs: 1, outcome: "retryable" },
        now,
      );
    }
  }

  it("keeps the breaker open when 1C answers the lookup at an event's last attempt but its posting still times out", async () => {
    const timeout: OnecOutcome = { kind: "retryable", errorClass: "timeout", message: "1C did not answer in time" };
    const onec = scriptedOnec(() => timeout);
    const later = now + 3_600_000;
    await failedBefore("held-back", 1, later);
    await failedBefore("last", testPolicy.maxAttempts - 1, now + 1000);
    await accept("opener");
    // The opener's retry (48 s or more) comes after last's final attempt.
    const d = deliverer(
      onec,
      { concurrency: 1, breaker: { failureThreshold: 1, cooldownMs: 1000, maxCooldownMs: 1000 } },
      register,
      { baseMs: 60_000 },
    );
    await step(d); // opener times out: the breaker opens
    expect(d.breakerState).toBe("open");

    now += 1000;
    await step(d); // the probe is last's final attempt: it times out, 1C says it does not hold the event
    expect(await register.find("default", "last")).toMatchObject({
      status: "FAILED_FINAL",
      attempts: testPolicy.maxAttempts,
    });
    expect(onec.lookups).toEqual(["last"]);
    expect(d.breakerState).toBe("open");
    await step(d);
    // Nothing was brought forward: the event that waits out the outage keeps its backoff and its budget.
    expect(await register.find("default", "held-back")).toMatchObject({ attempts: 1, nextAttemptAt: later });
    expect(onec.calls.map((call) => call.idempotencyKey)).toEqual(["opener", "last"]);
  });

  async function crashThreeTimes(eventId: string): Promise<void> {
    // Three claims whose process died mid-call: leases taken, never settled.
    for (let crash = 0; crash < 3; crash++) {
      await register.claim({
        owner: `dead-${crash}`,
        now,
        leaseMs: 1000,
        limit: 1,
        only: { sender: "default", eventId },
      });
      now += 1001;
    }
  }

  it("stops a poison event whose attempts keep dying with the process: asks 1C, never sends it again", async () => {
    await accept("poison");
    await crashThreeTimes("poison");
    const onec = scriptedOnec(() => delivered);
    const d = deliverer(onec);
    const ended = new Promise((resolve) => d.once("settled", resolve));
    await step(d);
    expect(await ended).toMatchObject({ status: "FAILED_FINAL", lastErrorClass: "crash_loop" });
    expect(onec.calls).toHaveLength(0);
    expect(onec.lookups).toEqual(["poison"]);
    const history = await register.listAttempts("default", "poison");
    expect(history.map((a) => a.outcome)).toEqual([null, null, null, "lookup_absent"]);
  });

  it("ends a poison event SUCCEEDED with 1C's order when 1C holds it, and waits while 1C cannot be asked", async () => {
    await accept("held");
    await crashThreeTimes("held");
    const down: OnecEventLookup = { kind: "unknown", errorClass: "ECONNREFUSED", message: "1C unreachable" };
    const onec = scriptedOnec(
      () => delivered,
      (lookup) => (lookup <= 2 ? down : { kind: "found", httpStatus: 200, order }),
    );
    const d = deliverer(onec);
    for (let i = 0; i < 2; i++) {
      await step(d);
      const waiting = await register.find("default", "held");
      expect(waiting).toMatchObject({ status: "FAILED_RETRYABLE", lastErrorClass: "onec_lookup_failed" });
      now = waiting?.nextAttemptAt ?? now;
    }
    await step(d);
    expect(await register.find("default", "held")).toMatchObject({ status: "SUCCEEDED", order });
    expect(onec.calls).toHaveLength(0);
    expect(onec.lookups).toHaveLength(3);
  });

  it("never ends an event 1C holds: a budget spent on timeouts ends SUCCEEDED with 1C's order", async () => {
    const timeout: OnecOutcome = { kind: "retryable", errorClass: "timeout", message: "1C did not answer in time" };
    const onec = scriptedOnec(
      () => timeout,
      () => ({ kind: "found", httpStatus: 200, order }),
    );
    const d = deliverer(onec);
    await accept("evt-hung");
    for (;;) {
      await step(d);
      const record = await register.find("default", "evt-hung");
      if (record?.status !== "FAILED_RETRYABLE") break;
      now = record.nextAttemptAt ?? now;
    }
    expect(onec.calls).toHaveLength(5);
    expect(onec.lookups).toEqual(["evt-hung"]);
    const record = await register.find("default", "evt-hung");
    expect(record).toMatchObject({ status: "SUCCEEDED", order });
    expect(JSON.parse(record?.response?.body ?? "{}")).toMatchObject({ status: "SUCCEEDED", order });
  });

  it("lets a stale worker's late outcome (expired lease) change nothing", async () => {
    await accept("evt-stale");
    const slow = deferred<OnecOutcome>();
    const a = deliverer(
      scriptedOnec(() => slow.promise),
      { owner: "worker-a", leaseMs: 1000 },
    );
    await a.pump();
    expect(a.inFlight).toBe(1);

    now += 1001; // worker A's lease has expired; worker B, another connection, takes over
    const other = await backend.open();
    try {
      const b = deliverer(
        scriptedOnec(() => delivered),
        { owner: "worker-b" },
        other,
      );
      await step(b);
      expect((await register.find("default", "evt-stale"))?.status).toBe("SUCCEEDED");

      slow.resolve(busy); // A finally hears back: 503
      await a.idle();
      const record = await register.find("default", "evt-stale");
      expect(record).toMatchObject({ status: "SUCCEEDED", order, lastError: null });
      const history = await register.listAttempts("default", "evt-stale");
      expect(history.map((h) => [h.worker, h.outcome, h.applied])).toEqual([
        ["worker-a", "retryable", false],
        ["worker-b", "delivered", true],
      ]);
    } finally {
      await Promise.all(running.splice(0).map((d) => d.stop()));
    }
  });

  it("keeps retrying rejected credentials without spending the budget, and delivers once they are fixed", async () => {
    const onec = scriptedOnec((call) =>
      call <= 6 ? { kind: "unauthorized", httpStatus: 401, message: "check ONEC_USER" } : delivered,
    );
    const d = deliverer(onec, {}, register, { maxAttempts: 2 });
    await accept("evt-auth");
    for (let i = 0; i < 7; i++) {
      await step(d);
      const record = await register.find("default", "evt-auth");
      if (record?.status === "SUCCEEDED") break;
      expect(record).toMatchObject({ status: "FAILED_RETRYABLE", lastErrorClass: "onec_unauthorized" });
      now = record?.nextAttemptAt ?? now;
    }
    expect(await register.find("default", "evt-auth")).toMatchObject({ status: "SUCCEEDED", attempts: 7 });
  });
});
