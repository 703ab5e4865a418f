import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.ts";
import { configError } from "../support/config-errors.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Settings that used to be dropped or changed in silence, now refused at
 * start. README: ONEC_USER and ONEC_PASSWORD are 1C's Basic credentials; a
 * password without a user was never sent (every call then gets 401). README:
 * BREAKER_COOLDOWN_MS "doubles after each failed probe, up to
 * BREAKER_MAX_COOLDOWN_MS" (3000 by default): a cap below the first cooldown
 * was raised to it.
 */

const base = { ONEC_URL: "http://1c.test/base/hs/integration" };
const PASSWORD = "1c-Passw0rd-Wq3Zt8";
const dir = tempDir("gateway-silent-settings-");
afterAll(() => dir.remove());

describe("ONEC_PASSWORD without ONEC_USER", () => {
  it("is refused, naming both variables and no part of the password, given directly or as a file", () => {
    const file = join(dir.path, "onec-password");
    writeFileSync(file, `${PASSWORD}\n`, { mode: 0o600 });
    for (const env of [
      { ...base, ONEC_PASSWORD: PASSWORD },
      { ...base, ONEC_PASSWORD_FILE: file },
      // compose writes an unset variable as empty: still no user.
      { ...base, ONEC_PASSWORD: PASSWORD, ONEC_USER: "" },
      { ...base, ONEC_PASSWORD: PASSWORD, ONEC_USER: "   " },
    ]) {
      const message = configError(env).message;
      expect(message).toMatch(/^ONEC_PASSWORD\b.*\bONEC_USER\b/);
      for (let at = 0; at + 6 <= PASSWORD.length; at++) expect(message).not.toContain(PASSWORD.slice(at, at + 6));
    }
  });

  it("takes both together, a user alone (an empty password), and neither", () => {
    expect(loadConfig({ ...base, ONEC_USER: "exchange", ONEC_PASSWORD: PASSWORD })).toMatchObject({
      onecUser: "exchange",
      onecPassword: PASSWORD,
    });
    expect(loadConfig({ ...base, ONEC_USER: "exchange" }).onecUser).toBe("exchange");
    expect(loadConfig({ ...base, ONEC_PASSWORD: "" }).onecUser).toBeUndefined();
    expect(loadConfig(base).onecUser).toBeUndefined();
  });
});

describe("BREAKER_MAX_COOLDOWN_MS below BREAKER_COOLDOWN_MS", () => {
  it.each([
    [{ BREAKER_COOLDOWN_MS: "5000", BREAKER_MAX_COOLDOWN_MS: "4000" }, "5000", "4000"],
    // The cooldown's default is 1000 (README).
    [{ BREAKER_MAX_COOLDOWN_MS: "500" }, "1000", "500"],
  ])("is refused, naming both settings and both values: %o", (settings, cooldown, max) => {
    const message = configError({ ...base, ...settings }).message;
    expect(message).toMatch(/BREAKER_MAX_COOLDOWN_MS/);
    expect(message).toMatch(/BREAKER_COOLDOWN_MS/);
    expect(message).toContain(cooldown);
    expect(message).toContain(max);
  });

  it("takes a cap equal to or above the cooldown, and the defaults 1000 and 3000", () => {
    expect(loadConfig({ ...base, BREAKER_COOLDOWN_MS: "5000", BREAKER_MAX_COOLDOWN_MS: "5000" })).toMatchObject({
      breakerCooldownMs: 5000,
      breakerMaxCooldownMs: 5000,
    });
    expect(loadConfig({ ...base, BREAKER_MAX_COOLDOWN_MS: "60000" }).breakerMaxCooldownMs).toBe(60_000);
    expect(loadConfig(base)).toMatchObject({ breakerCooldownMs: 1000, breakerMaxCooldownMs: 3000 });
  });

  it("a cooldown set above the cap's default, the cap unset: the cap is the cooldown, not an error", () => {
    expect(loadConfig({ ...base, BREAKER_COOLDOWN_MS: "60000" })).toMatchObject({
      breakerCooldownMs: 60_000,
      breakerMaxCooldownMs: 60_000,
    });
  });
});
