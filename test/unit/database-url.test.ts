import { describe, expect, it } from "vitest";
import { describeLocation, registerLocation } from "../../src/config/database-url.ts";
import { openRegister } from "../../src/register/open-register.ts";

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

  it("opens SQLite; PostgreSQL is refused with a configuration error until its register exists", () => {
    expect(() => openRegister({ kind: "postgres", url: "postgres://gw@127.0.0.1/gw" })).toThrow(
      /PostgreSQL register is not available yet/,
    );
  });
});
