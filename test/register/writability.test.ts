import { statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/register/port.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { reportingWrites, Writability } from "../../src/register/writability.ts";
import { startTestGateway } from "../support/gateway.ts";
import { call } from "../support/http.ts";
import { reserveRequest } from "../support/records.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Issue 25, part 2: /readyz answers from a writability kept up to date by a
 * probe with its own deadline and by the real writes, so it says 503 within
 * 1 s of the register becoming unwritable, 200 within 1 s of recovery, never
 * waits on the broken database, and logs each change once.
 */

interface Logged {
  level: "info" | "warn";
  message: string;
}

function logSink(): { lines: Logged[]; log: { info(o: object, m: string): void; warn(o: object, m: string): void } } {
  const lines: Logged[] = [];
  return {
    lines,
    log: {
      info: (_fields, message) => lines.push({ level: "info", message }),
      warn: (_fields, message) => lines.push({ level: "warn", message }),
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 5 ms; how long it took to hold, or undefined past `withinMs`. */
async function heldWithin(check: () => boolean, withinMs: number): Promise<number | undefined> {
  const started = performance.now();
  while (performance.now() - started <= withinMs) {
    if (check()) return performance.now() - started;
    await sleep(5);
  }
  return undefined;
}

describe("Writability", () => {
  let writability: Writability | undefined;
  afterEach(() => writability?.close());

  it("follows a probe that starts failing and recovers, with one log line per change, not per probe", async () => {
    let failing = false;
    let probes = 0;
    const { lines, log } = logSink();
    writability = new Writability({
      probe: async () => {
        probes += 1;
        if (failing) throw new StorageUnavailableError("database or disk is full");
      },
      log,
      everyMs: 20,
      deadlineMs: 40,
    });
    writability.start();
    // Three probes have passed (it starts writable, so only probes that ran prove anything).
    expect(await heldWithin(() => probes >= 3, 2000)).toBeDefined();
    expect(writability.writable).toBe(true);
    expect(lines).toEqual([]);
    failing = true;
    // Issue 25: unwritable within 1 s, writable again within 1 s of recovery.
    expect(await heldWithin(() => writability?.writable === false, 1000)).toBeDefined();
    expect(writability.reason).toBe("database or disk is full");
    // More failing probes, still one log line.
    const before = probes;
    expect(await heldWithin(() => probes > before + 2, 2000)).toBeDefined();
    expect(writability.writable).toBe(false);
    expect(lines.map((line) => line.level)).toEqual(["warn"]);
    failing = false;
    expect(await heldWithin(() => writability?.writable === true, 1000)).toBeDefined();
    // More passing probes, still one line for the recovery.
    const recovered = probes;
    expect(await heldWithin(() => probes > recovered + 2, 2000)).toBeDefined();
    expect(lines.map((line) => line.level)).toEqual(["warn", "info"]);
  });

  it("counts a probe that misses its deadline as unwritable, and starts no second one behind it", async () => {
    let release: (() => void) | undefined;
    let probes = 0;
    writability = new Writability({
      probe: () => {
        probes += 1;
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      },
      log: logSink().log,
      everyMs: 20,
      deadlineMs: 50,
    });
    writability.start();
    const took = await heldWithin(() => writability?.writable === false, 300);
    expect(took).toBeGreaterThanOrEqual(40);
    expect(writability.reason).toMatch(/within 50 ms/);
    await sleep(100);
    expect(probes).toBe(1);
    // The hung write finishes late: that proves nothing now, but the next probe may start.
    release?.();
    expect(await heldWithin(() => probes > 1, 1000)).toBeDefined();
    release?.();
    expect(await heldWithin(() => writability?.writable === true, 200)).toBeDefined();
  });

  it("learns from real writes at once: a storage failure, then a write that committed something", async () => {
    writability = new Writability({ probe: async () => {}, log: logSink().log });
    const full = new StorageUnavailableError("database or disk is full");
    await expect(writability.observe(Promise.reject(full), () => true)).rejects.toBe(full);
    expect([writability.writable, writability.reason]).toEqual([false, "database or disk is full"]);
    // A write that committed nothing (an event already recorded) proves nothing.
    await writability.observe(Promise.resolve("existing"), (outcome) => outcome === "created");
    expect(writability.writable).toBe(false);
    // A bug is not an outage.
    await expect(writability.observe(Promise.reject(new TypeError("bug")), () => true)).rejects.toThrow("bug");
    expect(writability.reason).toBe("database or disk is full");
    await writability.observe(Promise.resolve("created"), (outcome) => outcome === "created");
    expect(writability.writable).toBe(true);
  });

  it("stops probing on close and is not writable after it", async () => {
    let probes = 0;
    writability = new Writability({
      probe: async () => {
        probes += 1;
      },
      log: logSink().log,
      everyMs: 10,
    });
    writability.start();
    await sleep(50);
    writability.close();
    const after = probes;
    await sleep(60);
    expect(probes).toBe(after);
    expect(writability.writable).toBe(false);
  });
});

describe("reportingWrites on the SQLite register", () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;
  let raw: SqliteRegister;

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, "register.db");
    raw = new SqliteRegister(file);
  });
  afterEach(async () => {
    await raw.close();
    dir.remove();
  });

  it("is the register, with its writes reported and its writability carried for /readyz", async () => {
    const writability = new Writability({ probe: () => raw.ping(), log: logSink().log });
    const register = reportingWrites(raw, writability);
    expect(register.writability).toBe(writability);
    const blocker = new Database(file);
    try {
      // Another process holds the write lock past the busy timeout: the reservation fails, and says so.
      const impatient = new SqliteRegister(file, { busyTimeoutMs: 50 });
      const reported = reportingWrites(impatient, writability);
      blocker.exec("BEGIN IMMEDIATE");
      await expect(reported.reserve(reserveRequest({ eventId: "evt-locked" }))).rejects.toBeInstanceOf(
        StorageUnavailableError,
      );
      expect(writability.writable).toBe(false);
      blocker.exec("ROLLBACK");
      await impatient.close();
    } finally {
      blocker.close();
    }
    expect((await register.reserve(reserveRequest())).outcome).toBe("created");
    expect(writability.writable).toBe(true);
    expect((await register.find("default", "evt-1"))?.eventId).toBe("evt-1");
    await register.close();
    expect(writability.writable).toBe(false);
  });

  it("pings with a probe row larger than a page that really reaches the WAL, and is gone after", async () => {
    await raw.ping();
    const before = statSync(`${file}-wal`).size;
    await raw.ping();
    // An empty transaction commits on a full disk without writing: this one must write pages.
    expect(statSync(`${file}-wal`).size - before).toBeGreaterThan(6 * 1024);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare("SELECT count(*) AS n FROM register_probe").get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it("fails its ping while another process holds the write lock", async () => {
    const impatient = new SqliteRegister(file, { busyTimeoutMs: 50 });
    const blocker = new Database(file);
    try {
      blocker.exec("BEGIN IMMEDIATE");
      await expect(impatient.ping()).rejects.toBeInstanceOf(StorageUnavailableError);
      blocker.exec("ROLLBACK");
      await impatient.ping();
    } finally {
      blocker.close();
      await impatient.close();
    }
  });
});

describe("/readyz of a gateway whose register another process locks", () => {
  it("answers at once from state: 503 within 1 s of the lock, 200 within 1 s of its release; /healthz stays 200", async () => {
    const gateway = await startTestGateway({ ONEC_URL: "http://127.0.0.1:9" });
    const blocker = new Database(gateway.databasePath);
    try {
      const timed = async (path: string) => {
        const started = performance.now();
        const answer = await call(`${gateway.url}${path}`);
        return { status: answer.status, ms: performance.now() - started };
      };
      expect((await timed("/readyz")).status).toBe(200);
      // The writer waits out its 5 s busy timeout behind this: the probe's 500 ms deadline is what tells.
      blocker.exec("BEGIN IMMEDIATE");
      const locked = performance.now();
      let answer = await timed("/readyz");
      while (answer.status === 200 && performance.now() - locked < 2000) answer = await timed("/readyz");
      expect(answer.status).toBe(503);
      expect(performance.now() - locked).toBeLessThan(1000);
      // Answered from state: not held up by the probe's 500 ms deadline nor the writer's 5 s busy
      // timeout, which a /readyz that wrote to the register itself would wait out. 400 ms leaves room
      // for a slow machine and still tells either apart.
      expect(answer.ms).toBeLessThan(400);
      expect((await timed("/healthz")).status).toBe(200);
      blocker.exec("ROLLBACK");
      const released = performance.now();
      while (answer.status !== 200 && performance.now() - released < 2000) answer = await timed("/readyz");
      expect(answer.status).toBe(200);
      expect(performance.now() - released).toBeLessThan(1000);
      const changes = gateway.logs.filter((line) => /^register (not writable|writable again)/.test(String(line.msg)));
      expect(changes.map((line) => line.msg)).toEqual([
        "register not writable: not ready, /readyz answers 503",
        "register writable again: ready",
      ]);
    } finally {
      blocker.close();
      await gateway.close();
    }
  }, 15_000);
});
