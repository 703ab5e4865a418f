import { describe, expect, it } from "vitest";
import type { EventRegister } from "../../../src/register/port.ts";
import { type NewConsoleSession, SESSION_USE_STEP_MS } from "../../../src/register/session-port.ts";
import { T0 } from "../../support/records.ts";
import { registerBackends, registerPerTest } from "../../support/register-backends.ts";

/**
 * The console's sessions (port.ts: SessionStore), run on every backend.
 * Issue 22, finding 4: "There is no idle timeout: the session lasts a flat 8
 * hours". A session now ends at the first of two deadlines: maxMs after it
 * began, idleMs after its last use. The times here are the caller's (T0 + n):
 * PostgreSQL runs on node's clock in the conformance suite; its database
 * clock has its own cases in console-sessions-postgres-clock.test.ts.
 */
const MINUTE = 60_000;
const IDLE_MS = 30 * MINUTE;
const MAX_MS = 8 * 60 * MINUTE;

const anna: NewConsoleSession = {
  idDigest: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  operator: "anna",
  credentialDigest: "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
  csrfToken: "csrf-token-1",
  idleMs: IDLE_MS,
  maxMs: MAX_MS,
};

describe.each(registerBackends())("console sessions on $name", (backend) => {
  let register: EventRegister;

  registerPerTest(backend, (opened) => {
    register = opened;
  });

  it("creates a session with both deadlines, finds it and deletes it", async () => {
    const created = await register.sessions.create(anna, T0);
    expect(created).toEqual({
      idDigest: anna.idDigest,
      operator: "anna",
      credentialDigest: anna.credentialDigest,
      csrfToken: "csrf-token-1",
      idleMs: IDLE_MS,
      createdAt: T0,
      expiresAt: T0 + MAX_MS,
      lastUsedAt: T0,
    });
    expect(await register.sessions.find(anna.idDigest, T0 + 1)).toEqual(created);
    expect(await register.sessions.find("another-digest", T0 + 1)).toBeUndefined();
    await register.sessions.delete(anna.idDigest);
    expect(await register.sessions.find(anna.idDigest, T0 + 1)).toBeUndefined();
    // Signing out twice is harmless.
    await register.sessions.delete(anna.idDigest);
  });

  it("ends a session idle for idleMs: not found at its idle deadline or after it", async () => {
    await register.sessions.create(anna, T0);
    await register.sessions.create({ ...anna, idDigest: "unused" }, T0);
    expect(await register.sessions.find("unused", T0 + IDLE_MS)).toBeUndefined();
    expect(await register.sessions.find("unused", T0 + IDLE_MS + 1)).toBeUndefined();
    // Each find is a use: the session idles from the last one.
    const lastUse = T0 + 2 * IDLE_MS - 2;
    expect(await register.sessions.find(anna.idDigest, T0 + IDLE_MS - 1)).toBeDefined();
    expect(await register.sessions.find(anna.idDigest, lastUse)).toMatchObject({ lastUsedAt: lastUse });
    expect(await register.sessions.find(anna.idDigest, lastUse + IDLE_MS)).toBeUndefined();
  });

  it("ends a session in use at its absolute deadline, however recently it was used", async () => {
    await register.sessions.create(anna, T0);
    // A page every 20 minutes keeps it from idling...
    for (let at = T0 + 20 * MINUTE; at < T0 + MAX_MS; at += 20 * MINUTE) {
      expect(await register.sessions.find(anna.idDigest, at), `at +${(at - T0) / MINUTE} min`).toBeDefined();
    }
    expect(await register.sessions.find(anna.idDigest, T0 + MAX_MS - 1)).toBeDefined();
    // ...until maxMs after it began.
    expect(await register.sessions.find(anna.idDigest, T0 + MAX_MS)).toBeUndefined();
    expect(await register.sessions.find(anna.idDigest, T0 + MAX_MS + 1)).toBeUndefined();
  });

  it("writes a use only once the recorded one is SESSION_USE_STEP_MS old, as another instance sees", async () => {
    const other = await backend.open();
    await register.sessions.create(anna, T0);
    expect(SESSION_USE_STEP_MS).toBe(MINUTE);
    // Within the step: answered as recorded, nothing written.
    expect(await register.sessions.find(anna.idDigest, T0 + SESSION_USE_STEP_MS - 1)).toMatchObject({ lastUsedAt: T0 });
    expect(await other.sessions.find(anna.idDigest, T0 + 2)).toMatchObject({ lastUsedAt: T0 });
    // A step old: written, and every instance measures the idle time from it.
    expect(await register.sessions.find(anna.idDigest, T0 + SESSION_USE_STEP_MS)).toMatchObject({
      lastUsedAt: T0 + SESSION_USE_STEP_MS,
    });
    expect(await other.sessions.find(anna.idDigest, T0 + SESSION_USE_STEP_MS + 1)).toMatchObject({
      lastUsedAt: T0 + SESSION_USE_STEP_MS,
    });
    expect(await other.sessions.find(anna.idDigest, T0 + SESSION_USE_STEP_MS + IDLE_MS - 1)).toBeDefined();
  });

  it("never moves a recorded use backwards (an instance whose clock is behind)", async () => {
    const other = await backend.open();
    await register.sessions.create(anna, T0);
    await register.sessions.find(anna.idDigest, T0 + 10 * MINUTE);
    expect(await other.sessions.find(anna.idDigest, T0 + 5 * MINUTE)).toMatchObject({
      lastUsedAt: T0 + 10 * MINUTE,
    });
    expect(await register.sessions.find(anna.idDigest, T0 + 10 * MINUTE + 1)).toMatchObject({
      lastUsedAt: T0 + 10 * MINUTE,
    });
  });

  it("purges sessions past either deadline, and counts them", async () => {
    await register.sessions.create({ ...anna, idDigest: "idle" }, T0);
    await register.sessions.create({ ...anna, idDigest: "old", idleMs: 2 * MAX_MS }, T0 - MAX_MS + 10);
    await register.sessions.create({ ...anna, idDigest: "busy" }, T0);
    await register.sessions.find("busy", T0 + IDLE_MS - 1);
    const at = T0 + IDLE_MS;
    expect(await register.sessions.purgeExpired(at)).toBe(2);
    expect(await register.sessions.purgeExpired(at)).toBe(0);
    expect(await register.sessions.find("busy", at)).toMatchObject({ idDigest: "busy" });
    expect(await register.sessions.find("idle", T0)).toBeUndefined();
    expect(await register.sessions.find("old", T0)).toBeUndefined();
  });

  it("is shared by two register instances on one database: sign-in and sign-out seen by both", async () => {
    const other = await backend.open();
    const created = await register.sessions.create(anna, T0);
    expect(await other.sessions.find(anna.idDigest, T0 + 1)).toEqual(created);
    await other.sessions.delete(anna.idDigest);
    expect(await register.sessions.find(anna.idDigest, T0 + 1)).toBeUndefined();
  });
});
