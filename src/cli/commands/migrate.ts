import { parseArgs } from "node:util";
import { describeLocation } from "../../config/database-url.ts";
import { loadConfig } from "../../config/load-config.ts";
import { migrateRegister } from "../../register/open-register.ts";
import { noPositionals, parsing } from "../args.ts";
import type { Command } from "../context.ts";
import { ONEC_URL_NOT_NEEDED } from "../open-register.ts";

export const migrateCommand: Command = {
  name: "migrate",
  synopsis: "migrate",
  summary: "bring the register's schema up to date, start nothing",
  help: `Usage: gateway migrate

Applies the register's migrations that DATABASE_URL's database lacks, and
starts nothing: for a deployment step before the servers start. Servers and
workers apply them at start too, so running it is optional; on PostgreSQL
they take an advisory lock, so it is safe while instances start.

Prints what it applied, or that the schema was already current. A missing
SQLite file is created. Exits 1 when the database cannot be reached.

Reads DATABASE_URL; ONEC_URL is not needed.`,
  async run(argv, context) {
    const { positionals } = parsing(() => parseArgs({ args: argv, options: {}, allowPositionals: true }));
    noPositionals(positionals);
    const { database } = loadConfig(context.env, { onecUrl: ONEC_URL_NOT_NEEDED });
    const applied = await migrateRegister(database);
    const where = describeLocation(database);
    context.out(applied.length === 0 ? `${where}: up to date` : `${where}: applied ${applied.join(", ")}`);
    return 0;
  },
};
