import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Probes the PostgreSQL test server once per run (see test/support/postgres.ts).
    globalSetup: ["test/support/postgres-global-setup.ts"],
  },
});
