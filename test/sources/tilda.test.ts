import { describe, expect, it } from "vitest";
import { admitOrderPaid } from "../../src/accept/admit-order-paid.ts";
import type { OrderPaidEvent } from "../../src/domain/order-paid.ts";
import { readFormBody } from "../../src/sources/form-body.ts";
import type { Reading, SourceSettings } from "../../src/sources/port.ts";
import { tildaAdapter } from "../../src/sources/tilda.ts";
import { spreadDiscount } from "../../src/sources/tilda-order.ts";
import { expectCanonicalKeyOrder } from "../support/canonical-order.ts";
import {
  cartFields,
  cloudpaymentsPayment,
  formHeaders,
  jsonBody,
  jsonHeaders,
  jsonStringForm,
  minipressoPayment,
  NO_PAYMENT_SYSTEM,
  nestedForm,
  type Overrides,
  PAID_ONLINE,
  shoesPayment,
  TEST_REQUEST,
  TILDA_SECRET,
  type TildaPayment,
  type TildaProduct,
  tildaDelivery,
} from "../support/platforms/tilda.ts";

/** The sender's articles in 1C for the fixtures' products: by SKU, and by name for products without one. */
const SKUS = new Map([
  ["WAC-MP-GR", "00-000101"],
  ["WAC-MP-NS", "00-000102"],
  ["name:Nanopresso Barista Kit", "00-000103"],
  ["TS-OVR-BLK", "00-000201"],
  ["MUG-ENM-350", "00-000202"],
  ["name:Полуботинки женские (дм марсала, Размер: 36)", "00-000301"],
]);

const settings: SourceSettings = {
  sender: "shop-on-tilda",
  platform: "tilda",
  secrets: [TILDA_SECRET],
  currency: "RUB",
  skus: SKUS,
};

function read(body: string | Buffer, options: Parameters<typeof tildaDelivery>[1] = {}, with_ = settings): Reading {
  return tildaAdapter.read(tildaDelivery(body, options), with_);
}

function paid(reading: Reading): OrderPaidEvent {
  if (reading.kind !== "paid") throw new Error(`expected a paid reading, got ${JSON.stringify(reading)}`);
  expect(admitOrderPaid(reading.event, undefined).ok).toBe(true);
  expectCanonicalKeyOrder(reading.event);
  return reading.event;
}

/** A payload amount ("4.9", "24450", 70.02) in cents, by its digits: the test's own arithmetic, not the adapter's. */
function cents(amount: string | number | undefined): number {
  const [whole = "", fraction = ""] = String(amount).split(".");
  return Number(whole) * 100 + Number(fraction.padEnd(2, "0"));
}

function moneyOf(amount: string | number | undefined): string {
  const value = cents(amount);
  return `${Math.floor(value / 100)}.${String(value % 100).padStart(2, "0")}`;
}

/** What our event says was paid: Σ quantity × price + delivery, in cents. */
function eventSum(event: OrderPaidEvent): number {
  const items = event.order.items.reduce((sum, item) => sum + item.quantity * cents(item.price), 0);
  return items + (event.order.delivery === undefined ? 0 : cents(event.order.delivery.price));
}

function product(payment: TildaPayment, index: number): TildaProduct {
  return payment.products?.[index] as TildaProduct;
}

describe("tildaAdapter: how it answers", () => {
  it("answers 200 `ok` within Tilda's 5 seconds, and has no unsigned ping (Tilda's test carries the URL token)", () => {
    expect(tildaAdapter.platform).toBe("tilda");
    expect(tildaAdapter.answerStyle).toBe("plain-ok");
    expect(tildaAdapter.answerWithinMs).toBe(5000);
    expect(tildaAdapter.isPing).toBeUndefined();
  });
});

describe("tildaAdapter.verify: the secret in the webhook URL", () => {
  const body = nestedForm(minipressoPayment());

  it("accepts the sender's secret as the URL token", () => {
    expect(tildaAdapter.verify(tildaDelivery(body), settings)).toEqual({ ok: true });
  });

  it("accepts either secret during a rotation", () => {
    const rotating = { ...settings, secrets: ["the-new-secret-8d2e", TILDA_SECRET] };
    expect(tildaAdapter.verify(tildaDelivery(body, { token: TILDA_SECRET }), rotating)).toEqual({ ok: true });
    expect(tildaAdapter.verify(tildaDelivery(body, { token: "the-new-secret-8d2e" }), rotating)).toEqual({ ok: true });
  });

  it.each([
    ["another sender's secret", "tilda-url-token-of-someone-else"],
    ["the secret less its last character", TILDA_SECRET.slice(0, -1)],
    ["the secret with one more character", `${TILDA_SECRET}x`],
    ["an empty segment", ""],
    ["no token at all", undefined],
  ])("refuses %s", (_, token) => {
    const verdict = tildaAdapter.verify(tildaDelivery(body, { token }), settings);
    expect(verdict.ok).toBe(false);
  });

  it("does not take the secret from an X-API-Key header or body field: only the URL's token counts", () => {
    const withKey = jsonBody(minipressoPayment(), { ...cartFields(), "X-API-Key": TILDA_SECRET });
    const delivery = tildaDelivery(withKey, {
      token: undefined,
      headers: { ...jsonHeaders(), "x-api-key": TILDA_SECRET },
    });
    expect(tildaAdapter.verify(delivery, settings).ok).toBe(false);
  });
});

describe("tildaAdapter.read: Tilda's test request", () => {
  it("reads test=test as the test, with or without a Content-Type", () => {
    expect(read(TEST_REQUEST)).toEqual({ kind: "test" });
    expect(read(TEST_REQUEST, { headers: {} })).toEqual({ kind: "test" });
  });
});

describe("tildaAdapter.read: a paid cart, payment block as nested form fields (§3.4 shape 1)", () => {
  const payment = minipressoPayment();
  const body = nestedForm(payment);

  it("is the §3.4 fixture's form, paid online: payment[...] fields with bare brackets, `+` for a space", () => {
    const quoted = nestedForm(minipressoPayment(NO_PAYMENT_SYSTEM));
    expect(quoted).toContain(
      "payment[sys]=none&payment[systranid]=0&payment[orderid]=1557604691&payment[products][0][name]=Minipresso+GR&" +
        "payment[products][0][quantity]=1&payment[products][0][amount]=4500&payment[products][0][price]=4500&",
    );
    expect(quoted).toContain("&payment[amount]=24450&");
    expect(quoted).toContain("&formid=form42581206&formname=Cart");
    // The fixture quoted has no payment system (not a payment): here CloudPayments' transaction, nothing else changed.
    expect(body).toBe(
      quoted.replace(
        "payment[sys]=none&payment[systranid]=0&",
        "payment[sys]=cloudpayments&payment[systranid]=3521002298&",
      ),
    );
  });

  it("maps the products, the total and the customer from the payload", () => {
    const event = paid(read(body));
    expect(event.event_id).toBe("tilda:1557604691");
    expect(event.event_type).toBe("order.paid");
    expect(event.order.id).toBe(payment.orderid);
    expect(event.order.number).toBe(payment.orderid);
    expect(event.order.total).toBe(moneyOf(payment.amount));
    expect(event.order.currency).toBe("RUB");
    expect(event.order.tax).toBeUndefined();
    expect(event.order.delivery).toBeUndefined();
    expect(eventSum(event)).toBe(cents(payment.amount));
    expect(event.order.items).toEqual([
      { sku: "00-000101", name: product(payment, 0).name, quantity: 1, price: moneyOf(product(payment, 0).price) },
      { sku: "00-000102", name: product(payment, 1).name, quantity: 2, price: moneyOf(product(payment, 1).price) },
      // No SKU on the product: its name through the SKU map.
      { sku: "00-000103", name: product(payment, 2).name, quantity: 1, price: moneyOf(product(payment, 2).price) },
    ]);
    const fields = cartFields();
    expect(event.order.customer).toEqual({ name: fields.Name, email: fields.Email, phone: fields.Phone });
    // The payment is the payment system's transaction.
    expect(event.payment).toEqual({
      id: "3521002298",
      provider: "cloudpayments",
      amount: moneyOf(payment.amount),
      currency: "RUB",
    });
  });

  it("dates the event when it was received: the payload has no time", () => {
    const receivedAt = Date.parse("2025-03-14T09:26:53.512Z");
    expect(paid(read(body, { receivedAt })).occurred_at).toBe("2025-03-14T09:26:53.512Z");
  });

  it("records Tilda's ids for support", () => {
    const reading = read(body);
    const fields = cartFields();
    expect(reading.kind === "paid" && reading.ids).toEqual({
      tranid: fields.tranid,
      formid: "form42581206",
      formname: "Cart",
      orderid: "1557604691",
      systranid: "3521002298",
      sys: "cloudpayments",
    });
  });

  it("maps delivery: its price, the method and the address, and the products plus delivery are the amount", () => {
    const shipped = minipressoPayment({
      delivery: "Курьерская доставка по Москве",
      delivery_price: "350",
      delivery_address: "Москва, ул. Тверская, д. 7, кв. 12",
      amount: "24800",
    });
    const event = paid(read(nestedForm(shipped)));
    expect(event.order.delivery).toEqual({
      method: shipped.delivery,
      address: shipped.delivery_address,
      price: moneyOf(shipped.delivery_price),
    });
    expect(event.order.total).toBe(moneyOf(shipped.amount));
    expect(eventSum(event)).toBe(cents(shipped.amount));
  });

  it("maps a delivery method through the sender's shipping map", () => {
    const shipped = minipressoPayment({ delivery: "Самовывоз", delivery_price: "0" });
    const event = paid(
      read(nestedForm(shipped), {}, { ...settings, shippingMethods: new Map([["Самовывоз", "pickup"]]) }),
    );
    expect(event.order.delivery).toEqual({ method: "pickup", price: "0.00" });
  });

  it("splits a line whose total does not divide by its quantity, to the cent", () => {
    const split = minipressoPayment({
      products: [{ name: "Minipresso NS", quantity: "3", amount: "100", price: "33.33", sku: "WAC-MP-NS" }],
      amount: "100",
    });
    const event = paid(read(nestedForm(split)));
    expect(event.order.items).toEqual([
      { sku: "00-000102", name: "Minipresso NS", quantity: 2, price: "33.33" },
      { sku: "00-000102", name: "Minipresso NS", quantity: 1, price: "33.34" },
    ]);
    expect(eventSum(event)).toBe(cents(split.amount));
  });

  it("takes price × quantity for a product that has no amount", () => {
    const priced = minipressoPayment({
      products: [{ name: "Minipresso NS", quantity: "2", price: "5990", sku: "WAC-MP-NS" }],
      amount: "11980",
    });
    expect(paid(read(nestedForm(priced))).order.items).toEqual([
      { sku: "00-000102", name: "Minipresso NS", quantity: 2, price: "5990.00" },
    ]);
  });

  it("passes a product's SKU as the article when the sender has no SKU map", () => {
    const withSkus = minipressoPayment({ products: [product(minipressoPayment(), 0)], amount: "4500" });
    const event = paid(read(nestedForm(withSkus), {}, { ...settings, skus: undefined }));
    expect(event.order.items.map((item) => item.sku)).toEqual(["WAC-MP-GR"]);
  });

  it("reads the form's lower-case name, email and phone, and names the order when the form has none", () => {
    const lower = { name: "Анна", email: "anna@example.com", phone: "+79161234567", formid: "form1", formname: "Cart" };
    expect(paid(read(nestedForm(payment, lower))).order.customer).toEqual({
      name: "Анна",
      email: "anna@example.com",
      phone: "+79161234567",
    });
    expect(paid(read(nestedForm(payment, {}))).order.customer).toEqual({ name: "Tilda order 1557604691" });
  });
});

describe("tildaAdapter.read: a paid cart, payment block as one JSON field (§3.4 shape 2)", () => {
  const payment = cloudpaymentsPayment();
  const body = jsonStringForm(payment);

  it("spreads the promocode's discount over the lines, so they add up to the amount paid", () => {
    const event = paid(read(body));
    expect(event.event_id).toBe("tilda:1869817991");
    expect(event.order.total).toBe(moneyOf(payment.amount));
    expect(eventSum(event)).toBe(cents(payment.amount));
    // 485.10 off 490.00, in proportion: 299.70 bears 296.70 (296.703 rounded down), 190.30 bears 188.40
    // (188.397, taking the cent left over: the larger remainder). 3 × 1.00 + 1.90 = 4.90.
    expect(event.order.items).toEqual([
      { sku: "00-000201", name: product(payment, 0).name, quantity: 3, price: "1.00" },
      { sku: "00-000202", name: product(payment, 1).name, quantity: 1, price: "1.90" },
    ]);
    expect(event.payment).toEqual({
      id: payment.systranid,
      provider: "cloudpayments",
      amount: moneyOf(payment.amount),
      currency: "RUB",
    });
  });

  it("reads the same order from Tilda's JSON option to the same event", () => {
    const fromJson = paid(read(jsonBody(payment), { headers: jsonHeaders() }));
    expect(fromJson).toEqual(paid(read(body)));
    // A JSON body is recognised by its `{` too, whatever the Content-Type says.
    expect(paid(read(jsonBody(payment), { headers: {} }))).toEqual(fromJson);
  });

  it("reads numbers where the payload has them (24450, 70.02)", () => {
    const numeric = cloudpaymentsPayment({
      products: [{ name: "Кружка эмалированная", quantity: 2, amount: 70.02, price: 35.01, sku: "MUG-ENM-350" }],
      discount: undefined,
      promocode: undefined,
      delivery_price: 300,
      amount: 370.02,
    });
    const event = paid(read(jsonBody(numeric), { headers: jsonHeaders() }));
    expect(event.order.items).toEqual([
      { sku: "00-000202", name: "Кружка эмалированная", quantity: 2, price: "35.01" },
    ]);
    expect(event.order.delivery).toEqual({ price: "300.00" });
    expect(event.order.total).toBe("370.02");
  });

  it('maps products sent as "name=price", through the SKU map by name', () => {
    const shoes = shoesPayment();
    const event = paid(read(jsonStringForm(shoes)));
    expect(event.event_id).toBe("tilda:1132944846");
    expect(event.order.items).toEqual([
      { sku: "00-000301", name: "Полуботинки женские (дм марсала, Размер: 36)", quantity: 1, price: "1399.00" },
    ]);
    expect(event.order.total).toBe(moneyOf(shoes.amount));
  });
});

describe("tildaAdapter.read: retries", () => {
  const body = nestedForm(minipressoPayment());

  it("maps the same bytes received again to the identical event", () => {
    expect(read(body)).toEqual(read(body));
  });

  it("maps a retry received a minute later to the same event but for occurred_at", () => {
    const first = paid(read(body, { receivedAt: Date.parse("2025-03-14T09:26:53.000Z") }));
    const retry = paid(read(body, { receivedAt: Date.parse("2025-03-14T09:27:53.000Z") }));
    expect(retry.event_id).toBe(first.event_id);
    expect(retry.occurred_at).toBe("2025-03-14T09:27:53.000Z");
    expect({ ...retry, occurred_at: first.occurred_at }).toEqual(first);
  });

  it("keys the order by its orderid whatever tranid a retry carries", () => {
    const again = nestedForm(minipressoPayment(), cartFields({ tranid: "4717921:2786412999" }));
    expect(paid(read(again))).toEqual(paid(read(body)));
  });
});

describe("tildaAdapter.read: not a payment (ignored)", () => {
  const NOT_PAID_ONLINE = 'no payment system (payment.sys is "none"): the cart was not paid online';

  it("ignores §3.4's cart with no payment system (sys=none, systranid 0), nested form fields: no money moved", () => {
    // §3.4 shape 1 as quoted, the products it elides left out.
    const quoted =
      "payment[sys]=none&payment[systranid]=0&payment[orderid]=1557604691&payment[products][0][name]=Minipresso+GR&" +
      "payment[products][0][quantity]=1&payment[products][0][amount]=4500&payment[products][0][price]=4500&" +
      "payment[amount]=24450&formid=form42581206&formname=Cart";
    expect(read(quoted)).toEqual({
      kind: "ignored",
      key: "tilda:1557604691",
      reason: NOT_PAID_ONLINE,
      ids: { formid: "form42581206", formname: "Cart", orderid: "1557604691", systranid: "0", sys: "none" },
    });
  });

  it("ignores §3.4's cart with no payment system as one JSON field, and maps the same cart paid online", () => {
    const shoes = (sys: string, systranid: string) =>
      `formid=form42581206&formname=Cart&payment=${encodeURIComponent(
        `{"sys":"${sys}","systranid":"${systranid}","orderid":"1132944846",` +
          `"products":["Полуботинки женские (дм марсала, Размер: 36)=1399"],"amount":"1399"}`,
      )}`;
    expect(read(shoes("none", "0"))).toEqual({
      kind: "ignored",
      key: "tilda:1132944846",
      reason: NOT_PAID_ONLINE,
      ids: { formid: "form42581206", formname: "Cart", orderid: "1132944846", systranid: "0", sys: "none" },
    });
    // The same cart through CloudPayments is a payment, mapped: sys=none alone made it no payment.
    expect(paid(read(shoes("cloudpayments", "3521002298"))).event_id).toBe("tilda:1132944846");
  });

  it.each<[string, Overrides<TildaPayment>]>([
    ["the Minipresso cart, which maps when paid online", NO_PAYMENT_SYSTEM],
    ["a transaction id with sys=none", { sys: "none", systranid: "3521002298" }],
    ["no transaction id with sys=none", { sys: "none", systranid: undefined }],
    ["sys written None", { sys: "None", systranid: "0" }],
  ])("ignores a cart without a payment system whatever else it carries: %s", (_, overrides) => {
    expect(paid(read(nestedForm(minipressoPayment(PAID_ONLINE)))).event_id).toBe("tilda:1557604691");
    const cart = minipressoPayment(overrides);
    for (const reading of [
      read(nestedForm(cart)),
      read(jsonStringForm(cart)),
      read(jsonBody(cart), { headers: jsonHeaders() }),
    ]) {
      expect(reading).toMatchObject({ kind: "ignored", key: "tilda:1557604691" });
      expect(reading.kind === "ignored" && reading.reason).toBe(
        `no payment system (payment.sys is ${JSON.stringify(cart.sys)}): the cart was not paid online`,
      );
    }
  });

  it("ignores a form submission without a payment block", () => {
    const feedback =
      "Name=%D0%90%D0%BD%D0%BD%D0%B0&Email=anna%40example.com&tranid=4717921%3A2786412600&formid=form1&formname=Feedback";
    expect(read(feedback)).toEqual({
      kind: "ignored",
      key: null,
      reason: "a form submission without a payment block (not an order)",
      ids: { tranid: "4717921:2786412600", formid: "form1", formname: "Feedback" },
    });
  });

  it('ignores a cloudpayments order whose systranid is "0": no transaction, not paid', () => {
    const reading = read(jsonStringForm(cloudpaymentsPayment({ systranid: "0" })));
    expect(reading).toMatchObject({ kind: "ignored", key: "tilda:1869817991" });
    const reason = reading.kind === "ignored" ? reading.reason : "";
    expect(reason).toContain("no transaction id from cloudpayments");
    expect(reason).toContain('payment.systranid is "0"');
  });

  it("ignores an online payment without a systranid", () => {
    const reading = read(nestedForm(cloudpaymentsPayment({ systranid: undefined })));
    expect(reading).toMatchObject({ kind: "ignored", key: "tilda:1869817991" });
    expect(reading.kind === "ignored" && reading.reason).toContain("payment.systranid is missing");
  });
});

describe("tildaAdapter.read: a payment that cannot be mapped (unmapped, kept for support)", () => {
  function unmapped(reading: Reading): string {
    if (reading.kind !== "unmapped") throw new Error(`expected unmapped, got ${JSON.stringify(reading)}`);
    return reading.reason;
  }

  it("a product without a SKU whose name is not in the SKU map: the reason names it", () => {
    const unknown = minipressoPayment({
      products: [{ name: "Nanopresso Patrol Red", quantity: "1", amount: "7970", price: "7970" }],
      amount: "7970",
    });
    const reading = read(nestedForm(unknown));
    expect(reading).toMatchObject({ kind: "unmapped", key: "tilda:1557604691", ids: { orderid: "1557604691" } });
    expect(unmapped(reading)).toContain("name:Nanopresso Patrol Red");
  });

  it("a product without a SKU when the sender has no SKU map", () => {
    expect(unmapped(read(nestedForm(minipressoPayment()), {}, { ...settings, skus: undefined }))).toContain("no SKU");
  });

  it("a SKU not in the map", () => {
    const unknown = minipressoPayment({
      products: [{ name: "Minipresso CA", quantity: "1", amount: "4500", sku: "WAC-MP-CA" }],
      amount: "4500",
    });
    expect(unmapped(read(nestedForm(unknown)))).toContain('"WAC-MP-CA"');
  });

  it("no currency configured: Tilda's payload names none", () => {
    expect(unmapped(read(nestedForm(minipressoPayment()), {}, { ...settings, currency: undefined }))).toContain(
      "currency",
    );
  });

  it("an amount that is not what the products and delivery add up to: both figures in the reason", () => {
    const reason = unmapped(read(nestedForm(minipressoPayment({ amount: "24449.99" }))));
    expect(reason).toContain("24449.99");
    expect(reason).toContain("24450.00");
  });

  it("a discount larger than the products", () => {
    expect(unmapped(read(jsonStringForm(cloudpaymentsPayment({ discount: "500", amount: "0" }))))).toContain(
      "payment.discount",
    );
  });

  it.each<[string, Overrides<TildaPayment>]>([
    ["a percentage discount", { discount: "10%" }],
    ["an amount with three decimals", { amount: "4.905" }],
    ["no products", { products: [] }],
    ["no amount", { amount: undefined }],
  ])("%s", (_, overrides) => {
    expect(read(jsonStringForm(cloudpaymentsPayment(overrides))).kind).toBe("unmapped");
  });

  it("a quantity that is not a positive integer", () => {
    const zero = minipressoPayment({
      products: [{ name: "Minipresso GR", quantity: "0", amount: "0", sku: "WAC-MP-GR" }],
    });
    expect(unmapped(read(nestedForm(zero)))).toContain("quantity");
  });
});

describe("tildaAdapter.read: bodies it cannot read (malformed)", () => {
  it.each([
    ["bytes that are not UTF-8", Buffer.from([0x74, 0x65, 0x73, 0x74, 0x3d, 0xff]), formHeaders()],
    ["percent-encoded bytes that are not UTF-8 (windows-1251)", "Name=%C8%E2%E0%ED&formid=form1", formHeaders()],
    ["an empty body", "", formHeaders()],
    ["text that is not name=value", "hello", formHeaders()],
    ["broken JSON", '{"payment": {"orderid": "1"', jsonHeaders()],
    ["a JSON array", "[1, 2]", jsonHeaders()],
    [
      "a multipart body",
      "--x\r\nContent-Disposition: form-data; name=test\r\n\r\ntest\r\n--x--",
      { "content-type": "multipart/form-data; boundary=x" },
    ],
    ["a payment field that is not JSON", "payment=%7Bnot+json&formid=form1", formHeaders()],
    ["a payment field that is a JSON array", "payment=%5B1%5D", formHeaders()],
  ])("%s", (_, body, headers) => {
    expect(read(body, { headers }).kind).toBe("malformed");
  });

  it("a payment block without an orderid to key it by", () => {
    const reading = read(nestedForm(minipressoPayment({ orderid: undefined })));
    expect(reading.kind).toBe("malformed");
    expect(reading.kind === "malformed" && reading.detail).toContain("orderid");
  });
});

describe("spreadDiscount", () => {
  it("takes from each line in proportion to its total", () => {
    expect(spreadDiscount([30000n, 10000n], 4000n)).toEqual([27000n, 9000n]);
  });

  it("gives the cents left by rounding down to the largest remainders, the earlier line on a tie", () => {
    // 100 off 3 × 1.00: 33.33… each, one cent over, to the first.
    expect(spreadDiscount([100n, 100n, 100n], 100n)).toEqual([66n, 67n, 67n]);
    // All of 10 off lines of 1, 2 and 7: nothing is left of any.
    expect(spreadDiscount([1n, 2n, 7n], 10n)).toEqual([0n, 0n, 0n]);
    // 5 off 3 and 4: 2.14… and 2.85…: the second line takes the spare cent.
    expect(spreadDiscount([3n, 4n], 5n)).toEqual([1n, 1n]);
  });

  it("keeps the lines' sum equal to their total less the discount, and no line below zero", () => {
    const lines = [1n, 999n, 12345n, 7n, 0n, 500n];
    const total = lines.reduce((a, b) => a + b, 0n);
    for (let discount = 0n; discount <= total; discount += 97n) {
      const spread = spreadDiscount(lines, discount);
      expect(spread.reduce((a, b) => a + b, 0n)).toBe(total - discount);
      for (const [index, line] of spread.entries()) {
        expect(line >= 0n && line <= (lines[index] as bigint)).toBe(true);
      }
    }
  });

  it("leaves the lines as they are without a discount, and refuses one larger than they are", () => {
    expect(spreadDiscount([4500n, 11980n], 0n)).toEqual([4500n, 11980n]);
    expect(() => spreadDiscount([100n], 101n)).toThrow(/more than the products cost/);
  });
});

describe("readFormBody: a form as PHP's $_POST", () => {
  it("builds nested fields, lists by index, `+` as a space", () => {
    const read = readFormBody(
      "payment[products][1][name]=B&payment[products][0][name]=Minipresso+GR&payment[orderid]=1&Name=%D0%98%D0%B2%D0%B0%D0%BD",
    );
    expect(read).toEqual({
      ok: true,
      fields: {
        payment: { products: [{ name: "Minipresso GR" }, { name: "B" }], orderid: "1" },
        Name: "Иван",
      },
    });
  });

  it("reads percent-encoded brackets as brackets, appends on [], and lets the last of two equal names win", () => {
    expect(readFormBody("a%5Bb%5D=1&l[]=x&l[]=y&n=1&n=2")).toEqual({
      ok: true,
      fields: { a: { b: "1" }, l: ["x", "y"], n: "2" },
    });
  });

  it("keeps a name that is not of the nested shape as it is, and a name like __proto__ as a plain field", () => {
    const read = readFormBody("a[b=1&__proto__[x]=1");
    expect(read.ok && Object.keys(read.fields)).toEqual(["a[b", "__proto__"]);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it("refuses nesting deeper than 32 levels", () => {
    expect(readFormBody(`a${"[b]".repeat(40)}=1`).ok).toBe(false);
  });
});
