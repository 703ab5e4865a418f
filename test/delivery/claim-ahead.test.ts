import { afterEach, describe, expect, it } from "vitest";
import { Deliverer, type DelivererOptions } from "../../src/delivery/deliverer.ts";
import type { OrderPaidDelivery } from "../../src/onec/client.ts";
import type { OnecOutcome } from "../../src/onec/outcome.ts";
import type { ClaimRequest, EventRecord, EventRegister } from "../../src/register/port.ts";
import { drivenOptions, recordEvent, silentLog, testPolicy } from "../support/deliverers.ts";
import { T0 } from "../support/records.ts";
import { registerBackends, registerPerTest } from "../support/register-backends.ts";

const delivered: OnecOutcome = { kind: "delivered", httpStatus: 201, order: { id: "o-1", number: "ORD-1" } };

function deferred<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * The deliverer's ready claims (src/delivery/deliverer.ts, AHEAD_PER_SLOT): a
 * slot whose call ends starts a claim made ahead at once; a ready claim it will
 * not call is given back unsent (src/register/port.ts, Release).
 */
describe.each(registerBackends())("claims made ahead by the deliverer, on $name", (backend) => {
  let register: EventRegister;
  let now = T0;
  const running: Deliverer[] = [];

  registerPerTest(backend, (opened) => {
    register = opened;
    now = T0;
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((d) => d.stop()));
  });

  function deliverer(
    answer: (call: number, delivery: OrderPaidDelivery) => Promise<OnecOutcome>,
    options: Partial<DelivererOptions> = {},
    on: EventRegister = register,
  ) {
    const calls: string[] = [];
    const d = new Deliverer(
      {
        register: on,
        onec: {
          sendOrderPaid: (delivery) => {
            calls.push(delivery.idempotencyKey);
            return answer(calls.length, delivery);
          },
          lookUpEvent: async () => ({ kind: "absent", httpStatus: 404 }),
        },
        policy: testPolicy,
        now: () => now,
        log: silentLog,
      },
      drivenOptions({ concurrency: 1, leaseMs: 60_000, ...options }),
    );
    running.push(d);
    return { d, calls };
  }

  async function accept(...eventIds: string[]): Promise<void> {
    for (const eventId of eventIds) {
      await recordEvent(register, eventId, now);
      now += 1; // due in the order accepted
    }
  }

  const kinds = async (eventId: string) =>
    (await register.listAttempts("default", eventId)).map((a) => [a.kind, a.outcome]);

  async function drain(d: Deliverer): Promise<void> {
    while ((await register.backlog()).pending > 0 || d.inFlight > 0) await d.idle().then(() => d.pump());
  }

  it("starts a slot's next call from its ready claim, while the next claim's commit is still out", async () => {
    await accept("evt-1", "evt-2", "evt-3");
    const claimsHeld = deferred<void>();
    let holding = false;
    // The register with its claims held, from the moment the test says so until it lets them go.
    const held = new Proxy(register, {
      get(target, property, receiver) {
        if (property === "claim") {
          return async (...args: Parameters<EventRegister["claim"]>) => {
            if (holding) await claimsHeld.promise;
            return target.claim(...args);
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const firstAnswer = deferred<OnecOutcome>();
    const secondCall = deferred<void>();
    const { d, calls } = deliverer(
      async (call) => {
        if (call === 1) return firstAnswer.promise;
        secondCall.resolve();
        return delivered;
      },
      {},
      held,
    );
    d.start();
    while (calls.length < 1 || d.ready < 1) await d.pump();
    holding = true;
    firstAnswer.resolve(delivered);
    // Bounded: on a deliverer without ready claims the second call waits for a held claim.
    await Promise.race([secondCall.promise, new Promise((resolve) => setTimeout(resolve, 2000))]);
    const callsWhileHeld = [...calls];
    claimsHeld.resolve();
    expect(callsWhileHeld).toEqual(["evt-1", "evt-2"]);
    await drain(d);
    expect(calls).toEqual(["evt-1", "evt-2", "evt-3"]);
    expect(await kinds("evt-1")).toEqual([["just_in_time", "delivered"]]);
    expect(await kinds("evt-2")).toEqual([["ahead", "delivered"]]);
  });

  it("gives its ready claims back when it stops: the event as if never claimed", async () => {
    await accept("evt-1", "evt-2");
    const answer = deferred<OnecOutcome>();
    const { d, calls } = deliverer(() => answer.promise);
    d.start();
    while (d.ready < 1 || calls.length < 1) await d.pump();
    const stopped = d.stop();
    answer.resolve(delivered);
    await stopped;
    expect(calls).toEqual(["evt-1"]);
    expect(await register.find("default", "evt-1")).toMatchObject({ status: "SUCCEEDED" });
    expect(await register.find("default", "evt-2")).toMatchObject({
      status: "PROCESSING",
      attempts: 0,
      roundAttempts: 0,
      leaseOwner: null,
      leaseUntil: null,
    });
    expect(await register.listAttempts("default", "evt-2")).toEqual([]);
  });

  it("with 1C slow for its leases, gives back a claim that waited too long and claims no more ahead", async () => {
    await accept("evt-1", "evt-2", "evt-3");
    // A sixth of a 1.2 s lease is 200 ms: each call lasts longer than a ready claim may wait.
    const { d, calls } = deliverer(() => new Promise((resolve) => setTimeout(() => resolve(delivered), 300)), {
      leaseMs: 1200,
    });
    d.start();
    await drain(d);
    expect(calls.sort()).toEqual(["evt-1", "evt-2", "evt-3"]);
    for (const eventId of ["evt-1", "evt-2", "evt-3"]) {
      expect(await kinds(eventId)).toEqual([["just_in_time", "delivered"]]);
    }
  });

  it("asks for due events no more once a claim came back short, until something may be due", async () => {
    const asked: Array<"due" | "only"> = [];
    const counted = new Proxy(register, {
      get(target, property, receiver) {
        if (property === "claim") {
          return (request: ClaimRequest) => {
            asked.push(request.only === undefined ? "due" : "only");
            return target.claim(request);
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const { d, calls } = deliverer(async () => delivered, { concurrency: 4 }, counted);
    const settledOnce = (eventId: string) =>
      new Promise<void>((resolve) => {
        const onSettled = (record: EventRecord) => {
          if (record.eventId !== eventId) return;
          d.off("settled", onSettled);
          resolve();
        };
        d.on("settled", onSettled);
      });
    d.start();
    await d.idle(); // its first look finds nothing due
    asked.length = 0;

    // Recorded here: the change notice has it claimed on its own, and its call's end asks for nothing more.
    const first = settledOnce("evt-a");
    await accept("evt-a");
    await first;
    await d.idle();
    expect(calls).toEqual(["evt-a"]);
    expect(asked).toEqual(["only"]);

    // Recorded by another instance, which tells this one nothing: the next look (poll, pump) claims it.
    await recordEvent(await backend.open(), "evt-b", now);
    await d.pump();
    await d.idle();
    expect(calls).toEqual(["evt-a", "evt-b"]);
    expect(asked).toContain("due");
  });
});
