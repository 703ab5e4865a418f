import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { EventRegister, HitCounter } from "../../../src/register/port.ts";
import { registerBackends, registerPerTest } from "../../support/register-backends.ts";

/**
 * Conformance of the counters (src/register/port.ts, HitCounter): the
 * senders' rate limit counted where every instance sees it. A backend offers
 * one only where it is shared (PostgreSQL); without it each process counts
 * alone (SQLite), and says so by offering none.
 */
describe.each(registerBackends())("counters on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  function counterOf(on: EventRegister): HitCounter {
    if (on.hitCounter === undefined) throw new Error(`${backend.name} offers no hit counter`);
    return on.hitCounter;
  }

  it("offers a shared hit counter exactly where every instance can see it", () => {
    expect(register.hitCounter !== undefined).toBe(backend.sharesCounters);
  });

  it.runIf(backend.sharesCounters)("counts every instance's hits on one key into one window", async () => {
    const other = await backend.open();
    const key = `sender-${randomUUID()}`;
    const hits = await Promise.all(
      Array.from({ length: 20 }, (_, i) => counterOf(i % 2 === 0 ? register : other).hit(key, 60_000)),
    );
    expect(hits.map((hit) => hit.hits).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    for (const hit of hits) expect(hit.resetInMs).toBeGreaterThan(0);
    expect((await counterOf(register).hit(`another-${key}`, 60_000)).hits).toBe(1);
  });

  it.runIf(backend.sharesCounters)("opens a new window at the first hit after the last one ended", async () => {
    const key = `sender-${randomUUID()}`;
    const first = await counterOf(register).hit(key, 200);
    expect((await counterOf(register).hit(key, 200)).hits).toBe(2);
    // A window is time itself: nothing to await but its end.
    await sleep(first.resetInMs + 20);
    const next = await counterOf(register).hit(key, 200);
    expect(next.hits).toBe(1);
    expect(next.resetInMs).toBeGreaterThan(100);
  });
});
