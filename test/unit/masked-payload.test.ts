import { describe, expect, it } from "vitest";
import { maskedPayload, WITHHELD } from "../../src/operations/remap-delivery.ts";

/**
 * What a viewer (no personal-data.read) sees of a platform's payload: every
 * shape an adapter accepts is masked, and what cannot be masked field by
 * field is withheld, never shown as it came (docs/security.md, roles).
 */

const EMAIL = "ivan.petrov@example.com";
const PHONE_DIGITS = "79161234567";

function expectNoPersonalData(shown: string): void {
  expect(shown).not.toContain("ivan.petrov");
  expect(shown).not.toContain("ivan.petrov%40");
  expect(shown).not.toContain("1234567");
  expect(shown).not.toContain("123-45");
}

describe("a platform payload shown to a viewer", () => {
  const form = `Name=Ivan&Email=${encodeURIComponent(EMAIL)}&Phone=${encodeURIComponent("+7 (916) 123-45-67")}&payment%5Borderid%5D=1869817991`;

  it.each([
    ["form-encoded", "application/x-www-form-urlencoded"],
    ["sent as text/plain (Tilda reads it as a form)", "text/plain; charset=utf-8"],
    ["sent with no Content-Type (Tilda reads it as a form)", null],
  ])("masks a form %s, field by field", (_how, contentType) => {
    const shown = maskedPayload(form, contentType);
    expectNoPersonalData(shown);
    const fields = new URLSearchParams(shown);
    expect(fields.get("Email")).toMatch(/^i\*\*\*@example\.com$/);
    expect(fields.get("Phone")).toMatch(/67$/);
    expect(fields.get("payment[orderid]")).toBe("1869817991");
  });

  it("masks JSON that starts with a byte order mark, as the adapters read it", () => {
    const shown = maskedPayload(
      `\uFEFF${JSON.stringify({ email: EMAIL, phone: "+7 916 123-45-67" })}`,
      "application/json",
    );
    expectNoPersonalData(shown);
    expect(JSON.parse(shown)).toMatchObject({ email: "i***@example.com" });
  });

  it("masks a phone number sent as a JSON number", () => {
    const shown = maskedPayload(
      JSON.stringify({ customer: { phone: Number(PHONE_DIGITS) }, id: 5 }),
      "application/json",
    );
    expectNoPersonalData(shown);
    expect(JSON.parse(shown)).toMatchObject({ customer: { phone: expect.stringMatching(/67$/) }, id: 5 });
  });

  it("withholds JSON nested deeper than it can be walked (plain JSON.parse takes it), rather than fail the page", () => {
    const depth = 100_000;
    const deep = `{"email":${JSON.stringify(EMAIL)},"products":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    expect(() => JSON.parse(deep)).not.toThrow();
    expect(maskedPayload(deep, "application/json")).toBe(WITHHELD);
  });

  it("withholds text that is neither JSON nor a form, rather than show a phone no pattern finds", () => {
    expect(maskedPayload(`call Ivan on +${PHONE_DIGITS}`, "text/plain")).toBe(WITHHELD);
    expect(maskedPayload(`<order><phone>${PHONE_DIGITS}</phone></order>`, "application/xml")).toBe(WITHHELD);
  });
});
