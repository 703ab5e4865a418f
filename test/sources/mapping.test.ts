import { describe, expect, it } from "vitest";
import { admitOrderPaid } from "../../src/accept/admit-order-paid.ts";
import { toMinorUnits } from "../../src/domain/money.ts";
import {
  articleFor,
  currencyFor,
  customerOf,
  itemsForLine,
  MappingError,
  minorUnits,
  quoted,
} from "../../src/sources/mapping.ts";
import type { SourceSettings } from "../../src/sources/port.ts";
import { isHmacSha256Base64, isSecretToken } from "../../src/sources/signature.ts";
import { orderPaidEvent } from "../support/events.ts";

const settings = (extra: Partial<SourceSettings> = {}): SourceSettings => ({
  sender: "shop-a",
  platform: "shopify",
  secrets: ["0123456789abcdef"],
  ...extra,
});

describe("minorUnits: a platform's amount, exactly", () => {
  it.each([
    ["89.99", 8999n],
    ["0.9", 90n],
    ["1399", 139900n],
    [24450, 2445000n],
    [70.02, 7002n],
    ["10.500", 1050n],
    [" 5.00 ", 500n],
  ])("%j is %d minor units", (amount, minor) => {
    expect(minorUnits(amount, "x")).toBe(minor);
  });

  it.each([["1.005"], ["-1.00"], ["1e3"], [""], [null], [Number.NaN], ["12,50"]])("refuses %j", (amount) => {
    expect(() => minorUnits(amount, "the total")).toThrow(MappingError);
  });
});

describe("quoted: a platform's value in a reason, bounded", () => {
  it.each([
    ["a short string, as JSON", "pending", '"pending"'],
    ["a string past 80 characters, cut", "x".repeat(1000), JSON.stringify(`${"x".repeat(80)}…`)],
    ["a number", 24450, "24450"],
    ["null", null, "null"],
    ["an object, by its kind", { status: "paid" }, "an object"],
    ["an array, by its kind", [1, 2], "an array"],
  ])("%s", (_, value, shown) => {
    expect(quoted(value)).toBe(shown);
  });

  it("names an array nested 50 000 deep without walking it (JSON.stringify would throw RangeError)", () => {
    const deep = JSON.parse(`${"[".repeat(50_000)}${"]".repeat(50_000)}`) as unknown;
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(minorUnitsReason(deep)).toBe("the total is not an amount: an array");
  });
});

function minorUnitsReason(amount: unknown): string {
  try {
    minorUnits(amount, "the total");
  } catch (error) {
    if (error instanceof MappingError) return error.message;
    throw error;
  }
  return "an amount";
}

describe("itemsForLine: line prices that add up to the cent", () => {
  const total = (items: ReturnType<typeof itemsForLine>) =>
    items.reduce((sum, item) => sum + BigInt(item.quantity) * toMinorUnits(item.price), 0n);

  it("keeps a line that divides as one item", () => {
    expect(itemsForLine({ sku: "A", name: "Tea", quantity: 2, lineTotal: 10000n })).toEqual([
      { sku: "A", name: "Tea", quantity: 2, price: "50.00" },
    ]);
  });

  it("splits 3 units for 100.00 into 2 × 33.33 and 1 × 33.34", () => {
    const items = itemsForLine({ sku: "A", name: undefined, quantity: 3, lineTotal: 10000n });
    expect(items).toEqual([
      { sku: "A", quantity: 2, price: "33.33" },
      { sku: "A", quantity: 1, price: "33.34" },
    ]);
    expect(total(items)).toBe(10000n);
  });

  it.each([
    [7, 1n],
    [7, 99999n],
    [1000, 123457n],
  ])("for %d units of a line of %d minor units, the items add up to the line", (quantity, lineTotal) => {
    expect(total(itemsForLine({ sku: "A", name: "x", quantity, lineTotal }))).toBe(lineTotal);
  });

  it("refuses a quantity that is not a positive integer", () => {
    expect(() => itemsForLine({ sku: "A", name: "x", quantity: 0, lineTotal: 0n })).toThrow(MappingError);
    expect(() => itemsForLine({ sku: "A", name: "x", quantity: 1.5, lineTotal: 100n })).toThrow(MappingError);
  });
});

describe("articleFor: the 1C article of a platform SKU", () => {
  it("passes the SKU as it is when no map is configured", () => {
    expect(articleFor(" TEA-001 ", settings())).toBe("TEA-001");
    expect(() => articleFor("", settings())).toThrow(/no SKU/);
  });

  it("maps through the sender's map, and an unlisted SKU is unknown", () => {
    const mapped = settings({
      skus: new Map([
        ["TEA-OOLONG", "TEA-001"],
        ["variant:42", "MUG-010"],
      ]),
    });
    expect(articleFor("TEA-OOLONG", mapped)).toBe("TEA-001");
    expect(() => articleFor("COFFEE", mapped)).toThrow('unknown SKU "COFFEE"');
    expect(articleFor(null, mapped, ["variant:42"])).toBe("MUG-010");
  });
});

describe("currencyFor", () => {
  it("takes the payload's currency, which must be the configured one when one is set", () => {
    expect(currencyFor("rub", settings())).toBe("RUB");
    expect(currencyFor("RUB", settings({ currency: "RUB" }))).toBe("RUB");
    expect(() => currencyFor("USD", settings({ currency: "RUB" }))).toThrow(/not the sender's configured RUB/);
    expect(currencyFor(undefined, settings({ currency: "RUB" }))).toBe("RUB");
    expect(() => currencyFor(undefined, settings())).toThrow(MappingError);
  });
});

describe("customerOf: never fails a paid order over a contact", () => {
  it("takes the first name there is, and leaves out contacts our schema would refuse", () => {
    expect(
      customerOf({ names: [null, " ", "Jon Doe"], email: "not an email", phone: "call me", fallbackName: "x" }),
    ).toEqual({ name: "Jon Doe" });
    expect(customerOf({ names: [], email: "jon@example.com", phone: "+7 900 123-45-67", fallbackName: "x" })).toEqual({
      name: "jon@example.com",
      email: "jon@example.com",
      phone: "+7 900 123-45-67",
    });
    expect(customerOf({ names: [], fallbackName: "Shopify order #1001" })).toEqual({ name: "Shopify order #1001" });
  });
});

describe("customerOf keeps only an e-mail the order-paid schema takes", () => {
  it.each([["jon@localhost"], [".jon@example.com"], ["jon..doe@example.com"]])(
    "leaves out %s, which the schema's format: email refuses",
    (email) => {
      const event = orderPaidEvent();
      event.order.customer = { name: "Jon Doe", email };
      // The gateway's own validator is the reference: a contact it refuses must never reach the event.
      expect(admitOrderPaid(event, undefined).ok).toBe(false);
      expect(customerOf({ names: ["Jon Doe"], email, fallbackName: "x" })).toEqual({ name: "Jon Doe" });
    },
  );
});

describe("signatures", () => {
  // docs/platform-webhooks.md §1.2 and §2.2: computed with `openssl dgst -sha256 -hmac … -binary | base64`.
  it.each([
    ["shpss_test_secret", "K2XDCjoIIQnsCAW9wJNjHt4VwaiFCMoHAkXVA+JPSq0="],
    ["wc_test_secret", "drgh06S8p8LrCMoBByVAgc0gUObL4+aq0oGxszn/KJ8="],
  ])('verifies openssl\'s HMAC of {"id":1} under %s, among other secrets', (secret, header) => {
    const body = Buffer.from('{"id":1}');
    expect(isHmacSha256Base64(body, header, ["another-secret-0000", secret])).toBe(true);
    expect(isHmacSha256Base64(Buffer.from('{"id":2}'), header, [secret])).toBe(false);
    expect(isHmacSha256Base64(body, header, ["another-secret-0000"])).toBe(false);
    expect(isHmacSha256Base64(body, header.slice(0, -2), [secret])).toBe(false);
    expect(isHmacSha256Base64(body, [header, header], [secret])).toBe(false);
    expect(isHmacSha256Base64(body, undefined, [secret])).toBe(false);
  });

  it("compares a URL token with every secret", () => {
    expect(isSecretToken("tilda-url-secret-0123", ["x-0000000000000000", "tilda-url-secret-0123"])).toBe(true);
    expect(isSecretToken("tilda-url-secret-012", ["tilda-url-secret-0123"])).toBe(false);
    expect(isSecretToken("", ["tilda-url-secret-0123"])).toBe(false);
    expect(isSecretToken(undefined, ["tilda-url-secret-0123"])).toBe(false);
  });
});
