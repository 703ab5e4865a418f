import type { RegisterLocation } from "../config/database-url.ts";
import { ConfigError } from "../config/load-config.ts";
import type { EventRegister } from "./port.ts";
import { SqliteRegister } from "./sqlite/sqlite-register.ts";

/** The one place that turns DATABASE_URL's location into a register; callers see only the port. */
export function openRegister(location: RegisterLocation): EventRegister {
  switch (location.kind) {
    case "sqlite":
      return new SqliteRegister(location.path);
    case "postgres":
      throw new ConfigError("DATABASE_URL: the PostgreSQL register is not available yet; use a SQLite file path");
  }
}
