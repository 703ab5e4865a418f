import { fullFormats } from "ajv-formats/dist/formats.js";
import { describe, expect, it } from "vitest";
import { isDateTime } from "../../src/domain/date-time-format.ts";
import { checkOrderPaidSchema } from "../../src/domain/validate-order-paid.ts";
import { exampleEvent } from "../support/events.ts";
import { rng } from "../support/random.ts";

/** The reference: ajv-formats' own full-mode date-time, which the schema used before. */
const reference = (fullFormats["date-time"] as { validate: (text: string) => boolean }).validate;

/** Dates and times at every edge: month and day ranges, leap years, leap seconds under offsets. */
const DATES = [
  "2026-11-29",
  "2024-02-29",
  "2023-02-29",
  "2000-02-29",
  "1900-02-29",
  "2026-04-31",
  "2026-12-31",
  "2026-00-10",
  "2026-13-01",
  "2026-01-00",
  "0000-01-01",
  "9999-12-31",
];
const TIMES = [
  "12:34:56",
  "00:00:00",
  "23:59:59",
  "23:59:60",
  "24:00:00",
  "23:60:00",
  "00:59:60",
  "22:59:60",
  "12:34:60",
  "12:34:61",
  "99:99:99",
];
const ZONES = [
  "Z",
  "z",
  "+00:00",
  "-00:00",
  "+03:00",
  "-01:00",
  "+01:00",
  "+23:59",
  "+24:00",
  "-00:60",
  "+0300",
  "+03",
  "",
];
const SEPARATORS = ["T", "t", " "];
const FRACTIONS = ["", ".5", ".123"];

describe("the date-time format (ajv-formats' full mode, without its allocations)", () => {
  it("answers as ajv-formats does for every combination of edge dates, times, offsets and separators", () => {
    const differing: string[] = [];
    for (const date of DATES)
      for (const separator of SEPARATORS)
        for (const time of TIMES)
          for (const fraction of FRACTIONS)
            for (const zone of ZONES) {
              const text = `${date}${separator}${time}${fraction}${zone}`;
              if (isDateTime(text) !== reference(text)) differing.push(text);
            }
    expect(differing).toEqual([]);
  });

  it("answers as ajv-formats does for 20 000 strings with one character changed", () => {
    const random = rng(3339);
    const alphabet = "0123456789-:+TtZz .x";
    const bases = [
      "2026-11-29T12:34:56Z",
      "2026-11-29T15:34:56+03:00",
      "2016-12-31T23:59:60Z",
      "2017-01-01T02:59:60+03:00",
    ];
    const differing: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const base = bases[i % bases.length] as string;
      const at = Math.floor(random() * base.length);
      const text = base.slice(0, at) + alphabet[Math.floor(random() * alphabet.length)] + base.slice(at + 1);
      if (isDateTime(text) !== reference(text)) differing.push(text);
    }
    expect(differing).toEqual([]);
  });

  it("takes RFC 3339's own examples (section 5.8) and its leap second, and refuses an impossible date", () => {
    expect(isDateTime("1985-04-12T23:20:50.52Z")).toBe(true);
    expect(isDateTime("1996-12-19T16:39:57-08:00")).toBe(true);
    expect(isDateTime("1990-12-31T23:59:60Z")).toBe(true);
    expect(isDateTime("1990-12-31T15:59:60-08:00")).toBe(true);
    expect(isDateTime("2026-02-30T10:00:00Z")).toBe(false);
  });

  it("is the format the order-paid schema checks its timestamps with", () => {
    const event = { ...exampleEvent(), occurred_at: "2026-02-30T10:00:00Z" };
    const check = checkOrderPaidSchema(event);
    expect(check.ok).toBe(false);
    expect(check.ok ? [] : check.errors).toContainEqual(
      expect.objectContaining({ path: "/occurred_at", rule: "format" }),
    );
  });
});
