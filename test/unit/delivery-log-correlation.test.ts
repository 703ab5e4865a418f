import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Deliverer } from "../../src/delivery/deliverer.ts";
import { ReadyClaims } from "../../src/delivery/ready-claims.ts";
import type { OnecOutcome } from "../../src/onec/outcome.ts";
import type { Claim, EventRegister } from "../../src/register/port.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { drivenOptions, recordEvent, testPolicy } from "../support/deliverers.ts";
import { eventRecord, T0 } from "../support/records.ts";
import { tempDir } from "../support/temp.ts";

/**
 * docs/api.md: the correlation id is "written on every log line";
 * docs/operations.md (Logs): "delivery lines carry the event's", under
 * `correlation_id`. recordEvent gives event X the correlation id corr-X.
 */

/** A pino logger at debug whose lines are kept, parsed. */
function capturedLog() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n")) if (line !== "") lines.push(JSON.parse(line));
      callback();
    },
  });
  return { log: pino({ level: "debug" }, sink), lines };
}

function lineOf(lines: Array<Record<string, unknown>>, msg: string | RegExp): Record<string, unknown> {
  const line = lines.find((l) => (typeof msg === "string" ? l.msg === msg : msg.test(String(l.msg))));
  if (line === undefined) throw new Error(`no "${msg}" line in ${JSON.stringify(lines)}`);
  return line;
}

describe("the deliverer's own lines carry the event's correlation_id", () => {
  let dir: ReturnType<typeof tempDir>;
  let register: SqliteRegister;
  let deliverer: Deliverer | undefined;
  beforeEach(() => {
    dir = tempDir("gateway-log-correlation-");
    register = new SqliteRegister(`${dir.path}/register.db`);
  });
  afterEach(async () => {
    await deliverer?.stop();
    deliverer = undefined;
    await register.close();
    dir.remove();
  });

  function start(on: EventRegister, outcome: OnecOutcome, log: pino.Logger): Deliverer {
    const onec = {
      sendOrderPaid: async () => outcome,
      lookUpEvent: async () => ({ kind: "absent" as const, httpStatus: 404 as const }),
    };
    deliverer = new Deliverer({ register: on, onec, policy: testPolicy, now: () => T0, log }, drivenOptions());
    deliverer.start();
    return deliverer;
  }

  it("event stopped (an event ends FAILED_FINAL)", async () => {
    const { log, lines } = capturedLog();
    await recordEvent(register, "evt-stop", T0);
    const d = start(
      register,
      { kind: "rejected", httpStatus: 422, code: "UNKNOWN_SKU", message: "no such article" },
      log,
    );
    await d.pump();
    await d.idle();
    expect(await register.find("default", "evt-stop")).toMatchObject({ status: "FAILED_FINAL" });
    const line = lineOf(lines, /^event stopped/);
    expect([line.level, line.event_id, line.correlation_id]).toEqual([50, "evt-stop", "corr-evt-stop"]);
  });

  it("attempt outcome not written (an error other than lost storage)", async () => {
    const { log, lines } = capturedLog();
    await recordEvent(register, "evt-unwritten", T0);
    const failing = new Proxy(register, {
      get(target, property, receiver) {
        if (property === "settle") return async () => Promise.reject(new Error("a bug in the register"));
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const d = start(failing, { kind: "delivered", httpStatus: 201, order: { id: "o-1", number: "1" } }, log);
    await d.pump();
    await d.idle();
    const line = lineOf(lines, "attempt outcome not written");
    expect([line.level, line.event_id, line.correlation_id]).toEqual([50, "evt-unwritten", "corr-evt-unwritten"]);
  });
});

describe("a ready claim given back carries the event's correlation_id", () => {
  const claim: Claim = {
    record: eventRecord({ eventId: "evt-ready", correlationId: "corr-evt-ready" }),
    lease: { sender: "default", eventId: "evt-ready", owner: "w", token: 1 },
  };

  async function giveBack(settle: () => Promise<unknown>) {
    const { log, lines } = capturedLog();
    const done: Array<Promise<void>> = [];
    const ready = new ReadyClaims({
      register: { settle } as unknown as Pick<EventRegister, "settle">,
      log,
      now: () => T0,
      maxWaitMs: 1000,
      givingBack: (_key, written) => done.push(written),
    });
    ready.add(claim, "default/evt-ready", T0);
    ready.giveBackAll("stopping");
    await Promise.all(done);
    return lines;
  }

  it("ready claim given back (debug)", async () => {
    const lines = await giveBack(async () => claim.record);
    const line = lineOf(lines, "ready claim given back");
    expect([line.level, line.event_id, line.correlation_id]).toEqual([20, "evt-ready", "corr-evt-ready"]);
  });

  it("ready claim not given back (error)", async () => {
    const lines = await giveBack(async () => Promise.reject(new Error("disk on fire")));
    const line = lineOf(lines, /^ready claim not given back/);
    expect([line.level, line.event_id, line.correlation_id]).toEqual([50, "evt-ready", "corr-evt-ready"]);
  });
});
