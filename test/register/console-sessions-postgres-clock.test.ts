import { describe, expect, it } from "vitest";
import type { NewConsoleSession } from "../../src/register/session-port.ts";
import { postgresForTests } from "../support/postgres.ts";
import { postgresRegistersPerTest } from "../support/postgres-registers.ts";

/**
 * Issue 22: "PostgreSQL sessions expire on the process clock, unlike the rest
 * of that backend, which uses the database clock." Here two instances run
 * nine hours apart (more than a session's 8-hour life), as two machines
 * without NTP would. On the database's clock they agree on when a session
 * ends; each case also runs on node's clock (DATABASE_CLOCK=node), where the
 * same skew ends a live session early.
 */
const pg = postgresForTests();
const HOUR = 3_600_000;
const SKEW_MS = 9 * HOUR;

const session: NewConsoleSession = {
  idDigest: "d1",
  operator: "anna",
  credentialDigest: "c1",
  csrfToken: "t1",
  idleMs: 30 * 60_000,
  maxMs: 8 * HOUR,
};

describe.skipIf(!pg.enabled)("PostgreSQL console sessions: whose clock", () => {
  const registers = postgresRegistersPerTest(pg, ["console_sessions"]);
  const { open, databaseNow } = registers;

  it("stamps a new session with the database's time, whatever the instance's clock says", async () => {
    const behind = await open("database");
    const before = await databaseNow();
    const created = await behind.sessions.create(session, Date.now() - SKEW_MS);
    const after = await databaseNow();
    expect(created.createdAt).toBeGreaterThanOrEqual(before);
    expect(created.createdAt).toBeLessThanOrEqual(after);
    expect(created.lastUsedAt).toBe(created.createdAt);
    expect(created.expiresAt).toBe(created.createdAt + session.maxMs);
  });

  it.each([
    ["database", true],
    ["node", false],
  ] as const)("on the %s clock, an instance running ahead finds a live session: %s", async (clock, found) => {
    const behind = await open(clock);
    const ahead = await open(clock);
    await behind.sessions.create(session, Date.now());
    expect((await ahead.sessions.find(session.idDigest, Date.now() + SKEW_MS)) !== undefined).toBe(found);
  });

  it.each([
    ["database", 0],
    ["node", 1],
  ] as const)("on the %s clock, an instance running ahead purges %i live session(s)", async (clock, purged) => {
    const behind = await open(clock);
    const ahead = await open(clock);
    await behind.sessions.create(session, Date.now());
    expect(await ahead.sessions.purgeExpired(Date.now() + SKEW_MS)).toBe(purged);
  });

  it.each([
    ["database", false],
    ["node", true],
  ] as const)(
    "on the %s clock, an instance running behind finds a session past its deadline: %s",
    async (clock, found) => {
      const ahead = await open(clock);
      const behind = await open(clock);
      // Begun nine hours ago by the database's clock: past its 8 hours.
      await ahead.sessions.create(session, Date.now() - SKEW_MS);
      if (clock === "database") {
        await registers.db.sql`UPDATE console_sessions SET created_at = created_at - ${SKEW_MS},
                       expires_at = expires_at - ${SKEW_MS}, last_used_at = last_used_at - ${SKEW_MS}`;
      }
      expect((await behind.sessions.find(session.idDigest, Date.now() - SKEW_MS)) !== undefined).toBe(found);
    },
  );
});
