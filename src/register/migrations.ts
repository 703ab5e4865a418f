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

const read = new Map<Backend, readonly Migration[]>();

/** Read once per process: the files ship with the code and never change under it, however many registers open. */
export function readMigrations(backend: Backend): readonly Migration[] {
  let migrations = read.get(backend);
  if (migrations === undefined) {
    const dir = codeFile(`register/${backend}/migrations/`);
    migrations = readdirSync(dir)
      .filter((file) => /^\d+_.+\.sql$/.test(file))
      .sort()
      .map((file) => ({
        version: Number.parseInt(file, 10),
        name: file.replace(/\.sql$/, ""),
        sql: readFileSync(new URL(file, dir), "utf8"),
      }));
    read.set(backend, migrations);
  }
  return migrations;
}
