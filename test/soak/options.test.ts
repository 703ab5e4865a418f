import { describe, expect, it } from "vitest";
import { parseOptions, UsageError } from "./options.ts";

describe("the soak's options", () => {
  it("takes flags after -- and what npm makes of flags before it", () => {
    expect(parseOptions(["--quick", "--seed", "7"], {})).toMatchObject({ quick: true, seed: 7, events: 760 });
    expect(parseOptions([], { npm_config_quick: "true", npm_config_seed: "9" })).toMatchObject({
      quick: true,
      seed: 9,
    });
    expect(parseOptions(["--seed=3", "--events", "100"], {})).toMatchObject({ quick: false, seed: 3, events: 100 });
  });

  it("refuses what it does not know", () => {
    expect(() => parseOptions(["--fast"], {})).toThrow(UsageError);
    expect(() => parseOptions(["--seed", "x"], {})).toThrow(UsageError);
  });
});

describe("the soak's register backend", () => {
  it("is PostgreSQL when DATABASE_URL names a server, as for the gateway itself", () => {
    const server = "postgres://user@host:5432/db";
    expect(parseOptions(["--quick"], { DATABASE_URL: server })).toMatchObject({ quick: true, postgres: server });
    expect(parseOptions([], { DATABASE_URL: "postgresql://u@h/d" }).postgres).toBe("postgresql://u@h/d");
  });

  it("is the run's own SQLite file otherwise, whatever SQLite file DATABASE_URL names", () => {
    expect(parseOptions(["--quick"], {}).postgres).toBeUndefined();
    expect(parseOptions([], { DATABASE_URL: "data/gateway.db" }).postgres).toBeUndefined();
    expect(parseOptions([], { DATABASE_URL: "sqlite:" }).postgres).toBeUndefined();
  });

  it("takes --postgres with or without a URL, before or after other flags", () => {
    const local = "postgres://postgres@127.0.0.1:5432/postgres";
    expect(parseOptions(["--postgres", "--quick"], {})).toMatchObject({ quick: true, postgres: local });
    expect(parseOptions(["--quick", "--postgres"], {})).toMatchObject({ quick: true, postgres: local });
    expect(parseOptions([], { npm_config_postgres: "true" }).postgres).toBe(local);
    expect(parseOptions(["--postgres", "postgres://a@b:1/c", "--seed", "4"], {})).toMatchObject({
      postgres: "postgres://a@b:1/c",
      seed: 4,
    });
    expect(parseOptions(["--postgres=postgres://a@b:1/c"], {}).postgres).toBe("postgres://a@b:1/c");
  });

  it("prefers the flag's URL, and takes DATABASE_URL's server for a bare flag", () => {
    const env = { DATABASE_URL: "postgres://env@host:5432/db" };
    expect(parseOptions(["--postgres"], env).postgres).toBe("postgres://env@host:5432/db");
    expect(parseOptions(["--postgres", "postgres://flag@host:5432/db"], env).postgres).toBe(
      "postgres://flag@host:5432/db",
    );
  });

  it("refuses --postgres with something other than a PostgreSQL URL", () => {
    expect(() => parseOptions(["--postgres", "data/gateway.db"], {})).toThrow(UsageError);
    expect(() => parseOptions(["--postgres="], {})).toThrow(UsageError);
  });
});
