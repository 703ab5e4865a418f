import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventRegister } from "../../src/register/port.ts";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { type AheadAttempts, aheadAttempts, attemptKinds } from "../support/ahead-attempts.ts";
import { postgresForTests } from "../support/postgres.ts";
import { tempDir } from "../support/temp.ts";
import { gateway } from "./cli-support.ts";

/**
 * Issue: an attempt the deliverer claimed ahead (src/register/port.ts,
 * AttemptKind) read back as claimed just in time after `gateway export` →
 * `gateway import`, and the poison rule treats the two kinds differently. It
 * must stay "ahead" between any two backends; an export written before
 * attempts had kinds (format version 1) must still import, its attempts
 * claimed just in time, as every attempt then was.
 */

const dir = tempDir("gateway-export-kind-");
afterAll(() => dir.remove());
const pg = postgresForTests();

interface Place {
  env: { DATABASE_URL: string };
  /** On node's clock: the fixture states its times. */
  open(): Promise<EventRegister>;
  drop(): Promise<void>;
}

type BackendName = "sqlite" | "postgres";
const BACKENDS: BackendName[] = pg.enabled ? ["sqlite", "postgres"] : ["sqlite"];

let places = 0;
/** A fresh, empty register on `name`. */
async function freshPlace(name: BackendName): Promise<Place> {
  if (name === "sqlite") {
    places += 1;
    const file = join(dir.path, `register-${places}.db`);
    return { env: { DATABASE_URL: file }, open: async () => new SqliteRegister(file), drop: async () => {} };
  }
  pg.require();
  const database = await pg.database();
  if (database === undefined) throw new Error("no PostgreSQL database");
  return {
    env: { DATABASE_URL: database.url },
    open: () => PostgresRegister.open(database.url, { poolMax: 2, clock: "node" }),
    drop: () => database.drop(),
  };
}

async function kindsIn(place: Place, eventIds: readonly string[]) {
  const register = await place.open();
  try {
    return await attemptKinds(register, eventIds);
  } finally {
    await register.close();
  }
}

function importInto(place: Place, file: string) {
  return gateway(["import", "--in", file], place.env);
}

describe.each(BACKENDS)("an attempt claimed ahead, exported from %s", { timeout: 60_000 }, (sourceName) => {
  const exportFile = join(dir.path, `export-from-${sourceName}.ndjson`);
  let source: Place;
  let fixture: AheadAttempts;

  beforeAll(async () => {
    source = await freshPlace(sourceName);
    const register = await source.open();
    try {
      fixture = await aheadAttempts(register);
    } finally {
      await register.close();
    }
    // What the source holds is what every target must hold: the fixture is as meant.
    expect(await kindsIn(source, Object.keys(fixture.expected))).toEqual(fixture.expected);
    const run = gateway(["export", "--out", exportFile], source.env);
    expect([run.status, run.stderr]).toEqual([0, expect.stringContaining("exported 2 events")]);
  });
  afterAll(() => source?.drop());

  it("is written with its kind, in a format version that says attempts have one", () => {
    const lines = readFileSync(exportFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ type: "header", version: 5 });
    const kinds = Object.fromEntries(
      lines
        .filter((line) => line.type === "event")
        .map((line) => [
          line.event.event_id,
          line.delivery_attempts.map((a: { attempt: number; kind: string }) => [a.attempt, a.kind]),
        ]),
    );
    expect(kinds).toEqual({
      [fixture.lost]: [
        [1, "ahead"],
        [2, "just_in_time"],
      ],
      [fixture.ready]: [[1, "ahead"]],
    });
  });

  it.each(BACKENDS)(
    "reads back as claimed ahead after `gateway import` into a fresh %s register",
    async (targetName) => {
      const target = await freshPlace(targetName);
      try {
        const run = importInto(target, exportFile);
        expect([run.status, run.stderr]).toEqual([0, ""]);
        expect(run.stdout).toMatch(/^imported 2 events/);
        expect(await kindsIn(target, Object.keys(fixture.expected))).toEqual(fixture.expected);
      } finally {
        await target.drop();
      }
    },
  );
});

describe("an export written before attempts had kinds", { timeout: 60_000 }, () => {
  let current: string[];
  let eventIds: string[];

  beforeAll(async () => {
    const source = await freshPlace("sqlite");
    const register = await source.open();
    try {
      eventIds = Object.keys((await aheadAttempts(register)).expected);
    } finally {
      await register.close();
    }
    const file = join(dir.path, "current.ndjson");
    expect(gateway(["export", "--out", file], source.env).status).toBe(0);
    current = readFileSync(file, "utf8").trimEnd().split("\n");
  });

  /** The lines as format version 1 wrote them: the same, without `kind` (nor what versions 3 and 4 added). */
  function versionOne(): string {
    const lines = current.map((text) => {
      const line = JSON.parse(text);
      if (line.type === "header") return { ...line, version: 1 };
      if (line.type === "end") return { type: "end", events: line.events };
      if (line.type !== "event") return line;
      const attempts = line.delivery_attempts.map(({ kind: _kind, ...rest }: Record<string, unknown>) => rest);
      const { source_delivery: _source, ...rest } = line;
      const { trace_context: _trace, ...event } = line.event;
      return { ...rest, event, delivery_attempts: attempts };
    });
    return `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
  }

  it.each(BACKENDS)("(format version 1) imports into %s, every attempt claimed just in time", async (targetName) => {
    const file = join(dir.path, `version-1-into-${targetName}.ndjson`);
    writeFileSync(file, versionOne());
    const target = await freshPlace(targetName);
    try {
      const run = importInto(target, file);
      expect([run.status, run.stderr]).toEqual([0, ""]);
      expect(run.stdout).toMatch(/^imported 2 events/);
      const kinds = Object.values(await kindsIn(target, eventIds)).flat();
      expect(kinds).toHaveLength(3);
      expect(kinds.map(([, kind]) => kind)).toEqual(["just_in_time", "just_in_time", "just_in_time"]);
    } finally {
      await target.drop();
    }
  });

  it("is told from a current one by its version: a current attempt without its kind is refused, naming the field", async () => {
    const index = current.findIndex((text) => JSON.parse(text).delivery_attempts?.length > 0);
    const line = JSON.parse(current[index] ?? "null");
    delete line.delivery_attempts[0].kind;
    const file = join(dir.path, "no-kind.ndjson");
    writeFileSync(file, `${current.map((text, at) => (at === index ? JSON.stringify(line) : text)).join("\n")}\n`);
    const target = await freshPlace("sqlite");
    const run = importInto(target, file);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`line ${index + 1}: /delivery_attempts/0.*kind`));
  });
});
