import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { readMigrations } from "../../src/register/migrations.ts";
import { postgresForTests } from "../support/postgres.ts";
import { tempDir } from "../support/temp.ts";
import { gateway } from "./cli-support.ts";

/** Issue 10: `npx gateway migrate` applies the migrations without starting a server. */
describe("gateway migrate", { timeout: 60_000 }, () => {
  const dir = tempDir("gateway-migrate-");
  afterAll(() => dir.remove());

  it("creates and migrates a new SQLite file once, then finds it up to date", () => {
    const file = join(dir.path, "new", "gateway.db");
    const first = gateway(["migrate"], { DATABASE_URL: file });
    expect(first.stderr).toBe("");
    expect([first.status, first.stdout.trim()]).toEqual([
      0,
      `${file}: applied ${readMigrations("sqlite")
        .map((m) => m.name)
        .join(", ")}`,
    ]);
    const again = gateway(["migrate"], { DATABASE_URL: file });
    expect([again.status, again.stdout.trim()]).toEqual([0, `${file}: up to date`]);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(readMigrations("sqlite").at(-1)?.version);
      expect(db.prepare("SELECT count(*) AS n FROM inbound_events").get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it("exits 1 with one line when PostgreSQL cannot be reached", () => {
    const run = gateway(["migrate"], { DATABASE_URL: "postgres://postgres@127.0.0.1:1/gateway" });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });

  const pg = postgresForTests();
  it.runIf(pg.enabled)(
    "migrates a PostgreSQL database once, recording each migration, then finds it up to date",
    async () => {
      pg.require();
      const database = await pg.database();
      if (database === undefined) throw new Error("no database");
      try {
        const names = readMigrations("postgres").map((m) => m.name);
        const first = gateway(["migrate"], { DATABASE_URL: database.url });
        expect(first.stderr).toBe("");
        expect(first.status).toBe(0);
        expect(first.stdout.trim()).toMatch(new RegExp(`: applied ${names.join(", ")}$`));
        const again = gateway(["migrate"], { DATABASE_URL: database.url });
        expect([again.status, again.stdout.trim().endsWith(": up to date")]).toEqual([0, true]);
        const recorded = await database.sql<{ name: string }[]>`SELECT name FROM register_migrations ORDER BY version`;
        expect(recorded.map((row) => row.name)).toEqual(names);
        expect(await database.sql`SELECT count(*)::int AS n FROM inbound_events`).toEqual([{ n: 0 }]);
      } finally {
        await database.drop();
      }
    },
  );
});
