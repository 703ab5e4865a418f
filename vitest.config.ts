import { configDefaults, defineConfig } from "vitest/config";

/**
 * The fault tests (test/faults/) mount file systems and stop the database
 * server: they run only when asked for by path (`npm run test:faults`), never
 * in the default run (`npm test`, `vitest run`).
 */
const faultsAskedFor = process.argv.some((arg) => arg.replace(/\\/g, "/").includes("test/faults"));

export default defineConfig({
  test: {
    // Probes the PostgreSQL test server once per run (see test/support/postgres.ts).
    globalSetup: ["test/support/postgres-global-setup.ts"],
    exclude: [...configDefaults.exclude, ...(faultsAskedFor ? [] : ["test/faults/**"])],
  },
});
