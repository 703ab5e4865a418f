import { existsSync } from "node:fs";
import { loadConfig } from "../config/load-config.ts";
import { openRegister } from "../register/open-register.ts";
import type { EventRegister } from "../register/port.ts";
import { CliFailure } from "./context.ts";

/**
 * status, list and replay only touch the database: ONEC_URL is not needed
 * for them, so a placeholder stands in when it is unset.
 */
export const ONEC_URL_NOT_NEEDED = "http://unused.invalid";

/**
 * Opens the gateway's register (DATABASE_URL), runs `use`, closes it.
 * Refuses a missing file rather than creating an empty database from a typo.
 */
export async function withRegister<T>(
  env: Readonly<Record<string, string | undefined>>,
  use: (register: EventRegister) => Promise<T>,
): Promise<T> {
  const { database, databaseClock } = loadConfig(env, { onecUrl: ONEC_URL_NOT_NEEDED });
  if (database.kind === "sqlite" && !existsSync(database.path)) {
    throw new CliFailure(`no database at ${database.path}: set DATABASE_URL to the gateway's SQLite file`);
  }
  // One command at a time: two connections are plenty.
  const register = await openRegister(database, { clock: databaseClock });
  try {
    return await use(register);
  } finally {
    await register.close();
  }
}
