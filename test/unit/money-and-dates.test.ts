import { describe, expect, it } from "vitest";
import { formatMinorUnits, toMinorUnits } from "../../src/domain/money.ts";
import { isWithinOnecDateRange } from "../../src/onec/contract/dates.ts";

describe("money strings in minor units", () => {
  it("reads the schema's money strings exactly, the largest included", () => {
    expect(toMinorUnits("1890.00")).toBe(189_000n);
    expect(toMinorUnits("450.05")).toBe(45_005n);
    expect(toMinorUnits("0.05")).toBe(5n);
    expect(toMinorUnits("0.00")).toBe(0n);
    // 15 digits and two decimals: past 2^53, so no Number could hold it.
    expect(toMinorUnits("999999999999999.99")).toBe(99_999_999_999_999_999n);
  });

  it("refuses what is not a money string", () => {
    for (const text of ["1.5", "1", "01.00", "-1.00", "1.000", " 1.00", "1.00 ", "1,00", "١.٠٠", ""]) {
      expect(() => toMinorUnits(text), text).toThrow(RangeError);
    }
  });

  it("writes minor units back as the same string", () => {
    for (const text of ["1890.00", "0.05", "999999999999999.99"])
      expect(formatMinorUnits(toMinorUnits(text))).toBe(text);
  });
});

describe("the years 1C's Date holds: 0001 to 3999", () => {
  it("reads the year as written, the first four digits", () => {
    expect(isWithinOnecDateRange("0001-01-01T00:00:00Z")).toBe(true);
    expect(isWithinOnecDateRange("2026-11-29T12:34:56Z")).toBe(true);
    expect(isWithinOnecDateRange("3999-12-31T23:59:59+03:00")).toBe(true);
    expect(isWithinOnecDateRange("0000-12-31T23:59:59Z")).toBe(false);
    expect(isWithinOnecDateRange("4000-01-01T00:00:00Z")).toBe(false);
  });

  it("refuses a year that is not four ASCII digits and a hyphen", () => {
    for (const text of ["202-11-29T12:34:56Z", "20261-11-29", "２０２６-11-29T12:34:56Z", "2026/11/29", "", "2026"]) {
      expect(isWithinOnecDateRange(text), text).toBe(false);
    }
  });
});
