import type { TestProject } from "vitest/node";
import { type PostgresAvailability, probePostgres } from "./postgres.ts";

declare module "vitest" {
  export interface ProvidedContext {
    postgres: PostgresAvailability;
  }
}

/** Once per run: is the PostgreSQL test server there? Test files read the answer with inject("postgres"). */
export default async function setup(project: TestProject): Promise<void> {
  project.provide("postgres", await probePostgres());
}
