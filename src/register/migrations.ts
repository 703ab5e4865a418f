import { readdirSync, readFileSync } from "node:fs";
import { codeFile } from "../util/package-files.ts";

/**
 * The register's schema, as numbered plain-SQL files, one folder per backend
 * (sqlite/migrations/, postgres/migrations/), numbered alike: 0001_register
 * is the same step on both. Append-only: a shipped file is never edited.
 * Each backend records the versions it applied in register_migrations.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export type Backend = "sqlite" | "postgres";

export function readMigrations(backend: Backend): Migration[] {
  const dir = codeFile(`register/${backend}/migrations/`);
  return readdirSync(dir)
    .filter((file) => /^\d+_.+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number.parseInt(file, 10),
      name: file.replace(/\.sql$/, ""),
      sql: readFileSync(new URL(file, dir), "utf8"),
    }));
}
