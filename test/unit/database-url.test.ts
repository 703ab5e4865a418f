import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeLocation, registerLocation } from "../../src/config/database-url.ts";
import { openRegister } from "../../src/register/open-register.ts";
import { StorageUnavailableError } from "../../src/register/port.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { tempDir } from "../support/temp.ts";

describe("DATABASE_URL", () => {
  it.each([
    ["data/gateway.db", { kind: "sqlite", path: "data/gateway.db" }],
    ["sqlite:/var/lib/gw.db", { kind: "sqlite", path: "/var/lib/gw.db" }],
    ["sqlite:///var/lib/gw.db", { kind: "sqlite", path: "/var/lib/gw.db" }],
    ["file:data/x.db", { kind: "sqlite", path: "data/x.db" }],
    ["postgres://gw@db:5432/gw", { kind: "postgres", url: "postgres://gw@db:5432/gw" }],
    ["postgresql://gw:secret@db/gw", { kind: "postgres", url: "postgresql://gw:secret@db/gw" }],
  ])("%s names %j", (raw, location) => {
    expect(registerLocation(raw)).toEqual(location);
  });

  it("refuses an empty SQLite path", () => {
    expect(() => registerLocation("sqlite:")).toThrow(/DATABASE_URL must name a SQLite file/);
  });

  it("never shows a password in messages", () => {
    expect(describeLocation(registerLocation("postgresql://gw:secret@db/gw"))).toBe("postgresql://gw@db/gw");
  });

  it("opens PostgreSQL for a postgres:// URL: an unreachable server is StorageUnavailableError, not a config error", async () => {
    await expect(
      openRegister({ kind: "postgres", url: "postgres://gw@127.0.0.1:1/gw" }, { poolMax: 1 }),
    ).rejects.toBeInstanceOf(StorageUnavailableError);
  });

  it("opens SQLite for a path, as a SQLite register", async () => {
    const dir = tempDir();
    try {
      const register = await openRegister({ kind: "sqlite", path: join(dir.path, "r.db") });
      expect(register).toBeInstanceOf(SqliteRegister);
      await register.close();
    } finally {
      dir.remove();
    }
  });
});
