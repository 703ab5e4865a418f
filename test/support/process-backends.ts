import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { registerLocation } from "../../src/config/database-url.ts";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { openRegister } from "../../src/register/open-register.ts";
import type { EventRegister } from "../../src/register/port.ts";
import { createTestDatabase, postgresForTests, type TestDatabase } from "./postgres.ts";
import { type GatewayProcess, spawnGateway } from "./process.ts";
import type { RegisterBackend } from "./register-backends.ts";
import { tempDir } from "./temp.ts";

/** A register backend as gateway processes see it: nothing but the DATABASE_URL they are started with. */
export interface ProcessBackend {
  name: RegisterBackend["name"];
}

/**
 * SQLite always; PostgreSQL when its server answers, or (PG_REQUIRED=1) always,
 * failing when it does not: the same choice as registerBackends().
 */
export function processBackends(): ProcessBackend[] {
  return postgresForTests().enabled ? [{ name: "sqlite" }, { name: "postgres" }] : [{ name: "sqlite" }];
}

/**
 * For a beforeAll that makes a register and starts gateway processes on it:
 * spawnGateway() allows each 20 s, and on a busy machine a new PostgreSQL
 * database and two processes migrating it overrun vitest's 10 s hook default.
 */
export const STARTUP_TIMEOUT_MS = 45_000;

export interface RegisterDatabases {
  /**
   * The DATABASE_URL of a new, empty register: a SQLite file, or a PostgreSQL
   * database made for it. Nothing is migrated yet, so processes started
   * together race on the first migration, as instances do in production.
   */
  create(): Promise<string>;
  /** The register at `url` through the port, for checks below the HTTP edge; closed after the file's tests. */
  open(url: string): Promise<EventRegister>;
}

/**
 * The registers of one test file's gateway processes on `backend`, removed
 * (PostgreSQL: dropped) after its tests. Call it before the harness that
 * starts the processes: hooks run as a stack, so the processes stop first.
 */
export function registerDatabases(backend: ProcessBackend): RegisterDatabases {
  const opened: EventRegister[] = [];
  const removals: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((register) => register.close()));
    for (const remove of removals.splice(0)) await remove();
  });

  let dir: ReturnType<typeof tempDir> | undefined;
  let files = 0;
  const createFile = async (): Promise<string> => {
    if (dir === undefined) {
      const made = tempDir("gateway-process-");
      dir = made;
      removals.push(() => made.remove());
    }
    files += 1;
    return join(dir.path, `register-${files}.db`);
  };
  const createDatabase = async (): Promise<string> => {
    postgresForTests().require();
    const database: TestDatabase = await createTestDatabase();
    removals.push(() => database.drop());
    return database.url;
  };

  return {
    create: backend.name === "sqlite" ? createFile : createDatabase,
    open: async (url) => {
      const register = await openRegister(registerLocation(url));
      opened.push(register);
      return register;
    },
  };
}

export interface GatewayPair {
  /** The 1C emulator both deliver to. */
  readonly onec: OnecEmulator;
  readonly gateways: readonly [GatewayProcess, GatewayProcess];
  /** Their register, opened in the test process through the port (a third instance on it); closed after the file. */
  openRegister(): Promise<EventRegister>;
}

/**
 * An emulator and two gateway processes on one new register on `backend`,
 * started together before the file's tests (so they also race on the first
 * migration) and stopped with SIGTERM after them. `env` comes on top of
 * ONEC_URL and DATABASE_URL.
 */
export function gatewayPairOn(backend: ProcessBackend, env: Record<string, string>): GatewayPair {
  const databases = registerDatabases(backend);
  let onec: OnecEmulator | undefined;
  let starting: Array<Promise<GatewayProcess>> = [];
  let gateways: [GatewayProcess, GatewayProcess] | undefined;
  let databaseUrl: string | undefined;
  beforeAll(async () => {
    onec = await startOnecEmulator();
    databaseUrl = await databases.create();
    const shared = { ONEC_URL: onec.url, DATABASE_URL: databaseUrl, ...env };
    const pair = [spawnGateway(shared), spawnGateway(shared)] as const;
    starting = [...pair];
    gateways = await Promise.all(pair);
  }, STARTUP_TIMEOUT_MS);
  afterAll(async () => {
    // Also a process that came up after the start timed out: none may outlive the file.
    const started = await Promise.allSettled(starting);
    await Promise.all(started.map((s) => (s.status === "fulfilled" ? s.value.kill("SIGTERM") : undefined)));
    await onec?.close();
  }, STARTUP_TIMEOUT_MS);
  return {
    get onec() {
      if (onec === undefined) throw new Error("the emulator starts in beforeAll");
      return onec;
    },
    get gateways() {
      if (gateways === undefined) throw new Error("the gateways start in beforeAll");
      return gateways;
    },
    openRegister: () => {
      if (databaseUrl === undefined) throw new Error("the register is made in beforeAll");
      return databases.open(databaseUrl);
    },
  };
}
