import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { EmulatorOrder } from "../../src/onec-emulator/emulator.ts";
import { consoleCall, signInAs } from "../support/console-client.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, type HttpAnswer } from "../support/http.ts";
import { VIEWER, writeOperatorsFile } from "../support/operators.ts";
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
  PAID_ONLINE,
  shoesPayment,
  TEST_REQUEST,
  TILDA_SECRET,
  type TildaPayment,
  type TildaProduct,
  tildaWebhookPath,
} from "../support/platforms/tilda.ts";
import { rng, shuffled, testSeed, withSeed } from "../support/random.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Tilda's "Webhook" data receiver end to end: real HTTP on 127.0.0.1, the
 * gateway on its own SQLite file, the 1C emulator. Bodies come from
 * test/support/platforms/tilda.ts (the payment block in each shape seen in
 * docs/platform-webhooks.md §3.4); Tilda signs nothing, so the proof is the
 * secret in the URL. Expected money from the payment block itself.
 */

const SENDER = "shop-t";
const SHOES = "Полуботинки женские (дм марсала, Размер: 36)";
/** 1C's articles: the products' own SKUs, and a name for those the shop left without one. */
const SKUS: Record<string, string> = {
  "WAC-MP-GR": "WAC-MP-GR",
  "WAC-MP-NS": "WAC-MP-NS",
  "name:Nanopresso Barista Kit": "WAC-NP-BK",
  "TS-OVR-BLK": "TS-OVR-BLK",
  "MUG-ENM-350": "MUG-ENM-350",
  [`name:${SHOES}`]: "SHOE-MRS-36",
};

const dir = tempDir();
afterAll(() => dir.remove());
const sourcesFile = writeSourcesFile(dir.path, [
  { sender: SENDER, platform: "tilda", secrets: [TILDA_SECRET], currency: "RUB", skus: SKUS },
]);

const h = gatewayWithEmulator({
  SOURCES_FILE: sourcesFile,
  RATE_LIMIT_MAX: "100000",
  // Support's console, to see what was ignored and why.
  OPERATORS_FILE: writeOperatorsFile(dir.path, [VIEWER]),
});

/** What Tilda posts: the bytes and their Content-Type. */
interface Post {
  body: string;
  headers: Record<string, string>;
}

type Shape = "nested form" | "JSON in a form field" | "JSON body";

function post(payment: TildaPayment, shape: Shape = "nested form"): Post {
  if (shape === "JSON body") return { body: jsonBody(payment), headers: jsonHeaders() };
  const body = shape === "nested form" ? nestedForm(payment) : jsonStringForm(payment);
  return { body, headers: formHeaders() };
}

let nextOrder = 2_100_000_000;

/** A Tilda order number of its own, so tests never share an order. */
function newOrderId(): string {
  nextOrder += 1;
  return String(nextOrder);
}

async function deliver({ body, headers }: Post, path = tildaWebhookPath(SENDER)): Promise<HttpAnswer> {
  const answer = await call(`${h.gw.url}${path}`, { method: "POST", body, headers });
  expect(answer.headers["x-correlation-id"]).toMatch(/^\S{8,}$/);
  return answer;
}

/** Tilda waits for the text "ok" ("не смог вернуть Тильде сообщение «ok»"): every recorded delivery gets it. */
function expectOk(answer: HttpAnswer): void {
  expect(answer.status).toBe(200);
  expect(answer.headers["content-type"]).toMatch(/^text\/plain/);
  expect(answer.text).toBe("ok");
}

/**
 * Waits until the emulator holds `expected` orders for this Tilda order (1C's Idempotency-Key ends with the
 * event id), failing after 4 s (under the test's own 5 s); returns them.
 */
async function onecOrdersFor(orderId: string, expected: number): Promise<EmulatorOrder[]> {
  const matching = () => h.onec.orders().filter((order) => order.key.endsWith(`tilda:${orderId}`));
  await vi.waitFor(() => expect(matching().length, `1C orders of tilda:${orderId}`).toBeGreaterThanOrEqual(expected), {
    timeout: 4000,
    interval: 10,
  });
  return matching();
}

/** A payment block amount (strings or numbers, any decimals: "4.9", "24450") in cents, read here, not by the gateway's code. */
function cents(amount: string | number | undefined): number {
  const [whole = "", fraction = ""] = String(amount ?? "0").split(".");
  return Number(whole) * 100 + Number(fraction.padEnd(2, "0"));
}

function articleOf(product: TildaProduct): string {
  return SKUS[product.sku ?? `name:${product.name}`] ?? "?";
}

/** Each 1C article's quantity, from the payment block's products. */
function expectedQuantities(payment: TildaPayment): Record<string, number> {
  const quantities: Record<string, number> = {};
  for (const product of payment.products ?? []) {
    const line: TildaProduct =
      typeof product === "string" ? { name: product.slice(0, product.lastIndexOf("=")), quantity: 1 } : product;
    const article = articleOf(line);
    quantities[article] = (quantities[article] ?? 0) + Number(line.quantity);
  }
  return quantities;
}

function bookedQuantities(booked: EmulatorOrder): Record<string, number> {
  const quantities: Record<string, number> = {};
  for (const line of booked.booking?.lines ?? []) quantities[line.sku] = (quantities[line.sku] ?? 0) + line.quantity;
  return quantities;
}

function bookedSum(booked: EmulatorOrder): number {
  return (booked.booking?.lines ?? []).reduce((sum, line) => sum + line.quantity * cents(line.price), 0);
}

async function keysRecorded(): Promise<string[]> {
  return (await h.gw.gateway.register.sources.list({ limit: 1000 })).map((delivery) => delivery.key);
}

beforeEach(() => {
  h.onec.setFaults({ latencyMs: 0 });
});

describe("Tilda order webhook, end to end", () => {
  it.each([
    [
      "the Minipresso cart with courier delivery, as nested form fields",
      "nested form",
      minipressoPayment({ delivery: "Курьер", delivery_price: "500", amount: "24950" }),
    ],
    ["a CloudPayments order with a promocode, as JSON in a form field", "JSON in a form field", cloudpaymentsPayment()],
    ["the shoes order's name=price products, as a JSON body", "JSON body", shoesPayment()],
    [
      "a cart whose amounts are JSON numbers (70.02), as a JSON body",
      "JSON body",
      minipressoPayment({
        products: [{ name: "Minipresso GR", quantity: 3, amount: 60.06, price: 20.02, sku: "WAC-MP-GR" }],
        delivery: "Самовывоз",
        delivery_price: 9.96,
        amount: 70.02,
      }),
    ],
  ] as const)("makes one order in 1C from %s with the lines and the money paid", async (_, shape, fixture) => {
    const payment = { ...fixture, orderid: newOrderId() };
    const answer = await deliver(post(payment, shape));
    expectOk(answer);
    const [booked, ...more] = await onecOrdersFor(payment.orderid, 1);
    expect(more).toEqual([]);
    // Tilda names no currency (the sender's) and reports no tax.
    expect(booked?.booking).toMatchObject({ currency: "RUB", tax: null });
    expect(cents(booked?.booking?.total ?? "")).toBe(cents(payment.amount));
    const delivery = cents(payment.delivery_price);
    expect(cents(booked?.booking?.deliveryPrice ?? "0")).toBe(delivery);
    expect(bookedQuantities(booked as EmulatorOrder)).toEqual(expectedQuantities(payment));
    // What 1C books adds up to what the customer paid, promocode's discount included.
    expect(bookedSum(booked as EmulatorOrder) + delivery).toBe(cents(payment.amount));
  });

  it("books each product at its own price when there is no discount", async () => {
    const payment = minipressoPayment({ orderid: newOrderId() });
    expectOk(await deliver(post(payment)));
    const [booked] = await onecOrdersFor(String(payment.orderid), 1);
    const paid: Record<string, number> = {};
    for (const line of booked?.booking?.lines ?? [])
      paid[line.sku] = (paid[line.sku] ?? 0) + line.quantity * cents(line.price);
    const expected: Record<string, number> = {};
    for (const product of payment.products ?? []) {
      if (typeof product !== "string") expected[articleOf(product)] = cents(product.amount);
    }
    expect(paid).toEqual(expected);
  });

  it("answers a storm of 50 (one order's same bytes 8 times, other orders among them) with one order each", async () => {
    const shapes: Shape[] = ["nested form", "JSON in a form field", "JSON body"];
    const first = minipressoPayment({ orderid: newOrderId() });
    const others = Array.from({ length: 6 }, (_, index) =>
      index % 2 === 0 ? cloudpaymentsPayment({ orderid: newOrderId() }) : minipressoPayment({ orderid: newOrderId() }),
    );
    // Tilda's retries are the same bytes, a minute apart: here all at once, each received at its own time.
    const copies = [
      ...Array.from({ length: 8 }, () => post(first)),
      ...others.flatMap((payment, index) => Array.from({ length: 7 }, () => post(payment, shapes[index % 3]))),
    ];
    expect(copies).toHaveLength(50);
    // A seeded order: a failure names its seed, and TEST_SEED=<seed> replays it.
    const seed = testSeed();
    await withSeed(seed, async () => {
      const answers = await Promise.all(shuffled(copies, rng(seed)).map((copy) => deliver(copy)));
      for (const answer of answers) expectOk(answer);
      const orderIds = [first, ...others].map((payment) => String(payment.orderid));
      for (const orderId of orderIds) await onecOrdersFor(orderId, 1);
      // Tilda's last retry, after the storm.
      expectOk(await deliver(post(first)));
      for (const orderId of orderIds) expect(await onecOrdersFor(orderId, 1)).toHaveLength(1);
      // The receive time differs on every retry; no copy is kept as "a different order".
      const ignored = await h.gw.gateway.register.sources.list({ outcome: "ignored", limit: 1000 });
      const keys = new Set(orderIds.map((orderId) => `tilda:${orderId}`));
      expect(ignored.filter((delivery) => keys.has(delivery.key))).toEqual([]);
    });
  });

  it("refuses a wrong URL secret or an unknown sender with 401 and records nothing", async () => {
    const payment = cloudpaymentsPayment({ orderid: newOrderId() });
    for (const path of [
      tildaWebhookPath(SENDER, "tilda-url-token-0000000000000"),
      tildaWebhookPath(SENDER, `${TILDA_SECRET}0`),
      tildaWebhookPath("shop-unknown"),
    ]) {
      const answer = await deliver(post(payment), path);
      expect(answer.status).toBe(401);
      expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/webhook-signature" });
    }
    // Tilda's test request does not get past a wrong secret either.
    const test = await deliver(
      { body: TEST_REQUEST, headers: formHeaders() },
      tildaWebhookPath(SENDER, "x".repeat(28)),
    );
    expect(test.status).toBe(401);
    expect(await h.gw.gateway.register.find(SENDER, `tilda:${payment.orderid}`)).toBeUndefined();
    expect(await keysRecorded()).not.toContain(`tilda:${payment.orderid}`);
  });

  it("keeps a payment whose products nest 50 000 arrays deep as unmapped, saying so, never a 500", async () => {
    const payment = minipressoPayment(PAID_ONLINE);
    const orderid = newOrderId();
    const depth = 50_000;
    const body = jsonBody({ ...payment, orderid, products: ["DEEP"] }).replace(
      '"DEEP"',
      `${"[".repeat(depth)}${"]".repeat(depth)}`,
    );
    const answer = await deliver({ body, headers: jsonHeaders() });
    expectOk(answer);
    const unmapped = await h.gw.gateway.register.sources.list({ outcome: "unmapped", limit: 1000 });
    const kept = unmapped.find((delivery) => delivery.key === `tilda:${orderid}`);
    expect(kept?.reason).toBe('a product is an array, neither an object nor "name=price"');
    expect(kept?.payload).toBe(body);
  });

  it("acknowledges a form without a payment block with ok and shows it to support as ignored", async () => {
    const body = new URLSearchParams(
      cartFields({ formname: "Обратный звонок", tranid: "4717921:2786419999" }),
    ).toString();
    const answer = await deliver({ body, headers: formHeaders() });
    expectOk(answer);
    const ignored = await h.gw.gateway.register.sources.list({ outcome: "ignored", limit: 1000 });
    const seen = ignored.find((delivery) => delivery.correlationId === answer.headers["x-correlation-id"]);
    expect(seen).toMatchObject({ sender: SENDER, platform: "tilda", payload: body });
    expect(seen?.reason).toMatch(/payment block/);
  });

  it("acknowledges a CloudPayments order without a transaction id (systranid 0), sends nothing to 1C, and shows it as ignored", async () => {
    const payment = cloudpaymentsPayment({ orderid: newOrderId(), systranid: "0" });
    const answer = await deliver(post(payment));
    expectOk(answer);
    const ignored = await h.gw.gateway.register.sources.list({ outcome: "ignored", limit: 1000 });
    const seen = ignored.find((delivery) => delivery.key === `tilda:${payment.orderid}`);
    expect(seen).toMatchObject({ sender: SENDER, platform: "tilda", payload: post(payment).body });
    expect(seen?.reason).toMatch(/systranid/);
    expect(await h.gw.gateway.register.find(SENDER, `tilda:${payment.orderid}`)).toBeUndefined();
    // Its payment, when Tilda sends it, is the order's only one in 1C: the unpaid delivery sent nothing.
    const paid = { ...payment, systranid: "3521002299" };
    expectOk(await deliver(post(paid)));
    expect(await onecOrdersFor(String(payment.orderid), 1)).toHaveLength(1);
    expect(h.onec.orders().filter((order) => order.key.endsWith(`tilda:${payment.orderid}`))).toHaveLength(1);
  });

  it.each([
    ["the Minipresso cart as nested form fields (§3.4 shape 1)", "nested form", minipressoPayment(NO_PAYMENT_SYSTEM)],
    ["the shoes cart as one JSON form field (§3.4 shape 2)", "JSON in a form field", shoesPayment(NO_PAYMENT_SYSTEM)],
  ] as const)(
    "acknowledges a cart with no payment system (sys=none, systranid 0), %s, with ok, sends nothing to 1C, and shows support why",
    async (_, shape, fixture) => {
      const payment = { ...fixture, orderid: newOrderId() };
      const key = `tilda:${payment.orderid}`;
      const unpaid = post(payment, shape);
      expect(unpaid.body).toMatch(
        /payment\[sys\]=none&payment\[systranid\]=0&|%22sys%22%3A%22none%22%2C%22systranid%22%3A%220%22/,
      );
      const answer = await deliver(unpaid);
      expectOk(answer);
      const ignored = await h.gw.gateway.register.sources.list({ outcome: "ignored", limit: 1000 });
      const seen = ignored.find((delivery) => delivery.correlationId === answer.headers["x-correlation-id"]);
      expect(seen).toMatchObject({ sender: SENDER, platform: "tilda", key, payload: unpaid.body, eventId: null });
      expect(seen?.reason).toBe('no payment system (payment.sys is "none"): the cart was not paid online');
      // No event: nothing for 1C to book.
      expect(await h.gw.gateway.register.find(SENDER, key)).toBeUndefined();
      expect(h.onec.orders().filter((order) => order.key.endsWith(key))).toEqual([]);

      // Support sees it in the console's platform deliveries, ignored, with the reason.
      const { cookie } = await signInAs(h.gw.url, VIEWER.token);
      const page = await consoleCall(`${h.gw.url}/console/webhook-deliveries?sender=${SENDER}&outcome=ignored`, {
        headers: { cookie },
      });
      expect(page.status).toBe(200);
      const row = page.text.split("<tr>").find((candidate) => candidate.includes(`<td>${key}</td>`)) ?? "";
      expect(row).toContain(">ignored</span>");
      expect(row).toMatch(
        /no payment system \(payment\.sys is (&quot;|&#34;)none(&quot;|&#34;)\): the cart was not paid online/,
      );

      // When the same cart is paid online, that payment is the order's first and only one in 1C.
      const paid = await deliver(post({ ...payment, ...PAID_ONLINE }, shape));
      expectOk(paid);
      const booked = await onecOrdersFor(payment.orderid, 1);
      expect(booked).toHaveLength(1);
      expect(booked[0]?.correlationId).toBe(paid.headers["x-correlation-id"]);
    },
  );

  it("answers Tilda's test request (test=test) with 200 ok and records nothing", async () => {
    const before = await keysRecorded();
    expectOk(await deliver({ body: TEST_REQUEST, headers: formHeaders() }));
    expect(await keysRecorded()).toEqual(before);
  });

  it.each([
    [
      "a multipart body",
      {
        body: '--x\r\nContent-Disposition: form-data; name="test"\r\n\r\ntest\r\n--x--\r\n',
        headers: { "content-type": "multipart/form-data; boundary=x" },
      },
    ],
    ["JSON that does not parse", { body: '{"payment":{"orderid":"1"', headers: jsonHeaders() }],
    // Not Fastify's 415 "must be application/json": the label is Tilda's adapter's to judge, as any other.
    ["a form under a Content-Type that does not parse", { body: "test=test", headers: { "content-type": "///" } }],
  ])("refuses %s at the right URL with 400 and records nothing", async (_, bad) => {
    const before = (await h.gw.gateway.register.sources.list({ limit: 1000 })).length;
    const answer = await deliver(bad);
    expect(answer.status).toBe(400);
    expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/webhook-malformed" });
    expect((await h.gw.gateway.register.sources.list({ limit: 1000 })).length).toBe(before);
  });

  it("answers well inside Tilda's 5 s while 1C is slow", async () => {
    h.onec.setFaults({ latencyMs: 4000 });
    const payment = minipressoPayment({ orderid: newOrderId() });
    const started = performance.now();
    const answer = await deliver(post(payment));
    const elapsed = performance.now() - started;
    expectOk(answer);
    expect(elapsed).toBeLessThan(2500);
    h.onec.setFaults({ latencyMs: 0 });
    expect(await onecOrdersFor(String(payment.orderid), 1)).toHaveLength(1);
  });

  it("never writes the URL's secret to the log", async () => {
    const wrong = "tilda-url-token-wrong-00000000";
    const payment = minipressoPayment({ orderid: newOrderId() });
    expectOk(await deliver(post(payment)));
    expect((await deliver(post(payment), tildaWebhookPath(SENDER, wrong))).status).toBe(401);
    await onecOrdersFor(String(payment.orderid), 1);
    const urls = h.gw.logs.map((line) => line.url).filter((url) => String(url).includes("/webhooks/tilda/"));
    expect(urls.length).toBeGreaterThanOrEqual(2);
    for (const url of urls) expect(url).toMatch(/^\/integration\/v1\/webhooks\/tilda\/[^/]+\/<secret>$/);
    expect(urls).toContain(`/integration/v1/webhooks/tilda/${SENDER}/<secret>`);
    const logged = JSON.stringify(h.gw.logs);
    expect(logged).not.toContain(TILDA_SECRET);
    expect(logged).not.toContain(wrong);
  });
});
