import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { PG_SERVER_URL, postgresForTests } from "../support/postgres.ts";
import { tempDir } from "../support/temp.ts";
import { createSoakRegister, databaseOn } from "./database.ts";

describe("the soak's register location", () => {
  it("names another database on the same server, keeping user, password and parameters", () => {
    expect(databaseOn("postgres://user:pw@host:5432/db?sslmode=require", "gateway_soak_1")).toBe(
      "postgres://user:pw@host:5432/gateway_soak_1?sslmode=require",
    );
    expect(databaseOn("postgres://user@host:5432", "gateway_soak_1")).toBe("postgres://user@host:5432/gateway_soak_1");
  });

  it("is a file in the run's folder without a PostgreSQL server", async () => {
    const register = await createSoakRegister("/tmp/gateway-soak-x", undefined);
    expect(register.location).toEqual({ kind: "sqlite", path: "/tmp/gateway-soak-x/gateway.db" });
  });
});

const pg = postgresForTests();

describe.runIf(pg.enabled)("the soak's PostgreSQL database", () => {
  const dir = tempDir("gateway-soak-test-");
  const server = postgres(PG_SERVER_URL, { max: 1, onnotice: () => {} });
  afterAll(async () => {
    await server.end({ timeout: 1 });
    dir.remove();
  });
  const databases = async (): Promise<string[]> =>
    (await server<{ datname: string }[]>`SELECT datname FROM pg_database`).map((row) => row.datname);

  it("is a new database of its own, and removing it drops that one only", async () => {
    pg.require();
    const before = await databases();
    const register = await createSoakRegister(dir.path, PG_SERVER_URL);
    if (register.location.kind !== "postgres") throw new Error("expected a PostgreSQL register");
    const name = new URL(register.location.url).pathname.slice(1);
    expect(name).toMatch(/^gateway_soak_[0-9a-f]+$/);
    expect(before).not.toContain(name);
    expect(await databases()).toEqual(expect.arrayContaining([...before, name]));

    await register.remove();
    const after = await databases();
    expect(after).not.toContain(name);
    expect(after).toEqual(expect.arrayContaining(before));
  });
});
