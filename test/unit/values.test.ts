import { describe, expect, it } from "vitest";
import { httpUrl, InvalidValue, wholeNumber } from "../../src/config/values.ts";

describe("values operators type (environment and flags alike)", () => {
  it.each(["0", "8080", "65535"])("takes the whole number %s", (raw) => {
    expect(wholeNumber("PORT", raw, 0, 65535)).toBe(Number(raw));
  });

  it.each(["abc", "-1", "1.5", "1e3", " 80", "65536", ""])("refuses %j with the range in the message", (raw) => {
    expect(() => wholeNumber("PORT", raw, 0, 65535)).toThrow(
      new InvalidValue(`PORT must be a whole number from 0 to 65535, got "${raw}"`),
    );
  });

  it("takes http and https URLs as given, refuses anything else", () => {
    expect(httpUrl("ONEC_URL", "https://1c.local/base/hs/integration/")).toBe("https://1c.local/base/hs/integration/");
    expect(() => httpUrl("ONEC_URL", "ftp://1c.local")).toThrow(/ONEC_URL must be an http\(s\) URL/);
    expect(() => httpUrl("--onec-url", "1c.local")).toThrow(/--onec-url must be an http\(s\) URL/);
  });
});
