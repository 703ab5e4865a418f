import { ConfigError, loadConfig } from "../../src/config/load-config.ts";

/** The ConfigError loadConfig throws for `env`; fails the test when it accepts it or throws anything else. */
export function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}
