import { parseStrictJson } from "../domain/strict-json.ts";
import { readFormBody } from "./form-body.ts";
import { header, quoted } from "./mapping.ts";
import { paymentReading } from "./payment-reading.ts";
import { readPlatformJson } from "./platform-json.ts";
import type { PlatformIds, Reading, SourceAdapter, WebhookDelivery } from "./port.ts";
import { isSecretToken } from "./signature.ts";
import { text, tildaKey, tildaOrderEvent } from "./tilda-order.ts";

/**
 * Tilda's "Webhook" data receiver, with the order data it sends after a
 * payment (docs/platform-webhooks.md §3); a cart without a payment system
 * (`sys=none`) is sent when its form is submitted, unpaid, and is ignored.
 * Tilda signs nothing: the sender's secret is a path segment of the URL
 * the shop pastes, so anyone who has the URL can post. Only that token is
 * accepted; Tilda's marketplace integrations can send an X-API-Key, but
 * whether the site's Webhook receiver can is unconfirmed (Q10), and a
 * second way in is a second thing to leak.
 */
export const tildaAdapter: SourceAdapter = {
  platform: "tilda",
  // Tilda waits for the text `ok` (its sample script ends with `echo "ok"`).
  answerStyle: "plain-ok",
  // "скрипт должен отвечать в течение пяти секунд" (the FAQ says 7 s: the stricter one).
  answerWithinMs: 5000,
  readsHeaders: ["content-type"],

  verify(delivery, settings) {
    if (delivery.urlToken === undefined || delivery.urlToken === "") {
      return {
        ok: false,
        detail: "the webhook URL has no secret token (Tilda signs nothing: the URL's token is the proof)",
      };
    }
    return isSecretToken(delivery.urlToken, settings.secrets)
      ? { ok: true }
      : { ok: false, detail: "the webhook URL's token is not this sender's secret" };
  },

  read(delivery, settings): Reading {
    const body = fieldsOf(delivery);
    if (!body.ok) return { kind: "malformed", detail: body.detail };
    const { fields } = body;
    const block = paymentBlock(fields.payment);
    if (block.kind === "malformed") return block;
    if (block.kind === "none") {
      // Sent once when the webhook is connected; Tilda waits for a 200.
      if (fields.test === "test") return { kind: "test" };
      return {
        kind: "ignored",
        key: null,
        reason: "a form submission without a payment block (not an order)",
        ids: idsOf(fields, {}),
      };
    }
    const { payment } = block;
    const orderId = orderIdOf(payment.orderid);
    if (typeof orderId !== "string") return { kind: "malformed", detail: orderId.detail };
    const key = tildaKey(orderId);
    const ids = idsOf(fields, payment);
    const transaction = transactionOf(payment);
    if ("notPaid" in transaction) return { kind: "ignored", key, reason: transaction.notPaid, ids };
    return paymentReading(key, ids, () =>
      tildaOrderEvent(
        { fields, payment, orderId, transactionId: transaction.id, receivedAt: delivery.receivedAt },
        settings,
      ),
    );
  },
};

type Fields = Readonly<Record<string, unknown>>;

const utf8 = new TextDecoder("utf-8", { fatal: true });
const FORM = "application/x-www-form-urlencoded";

/**
 * The body as fields: a form (Tilda's default) or a JSON object (its JSON
 * option), told apart by the Content-Type or by a body that opens with `{`.
 */
function fieldsOf(delivery: WebhookDelivery): { ok: true; fields: Fields } | { ok: false; detail: string } {
  let body: string;
  try {
    body = utf8.decode(delivery.raw);
  } catch {
    return { ok: false, detail: "the body is not valid UTF-8" };
  }
  const media = header(delivery.headers, "content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (media === "application/json" || media.endsWith("+json") || /^\s*\{/.test(body)) {
    const json = readPlatformJson(delivery.raw);
    if (!json.ok) return { ok: false, detail: `the JSON body does not parse: ${json.detail}` };
    if (!isObject(json.value)) return { ok: false, detail: "the JSON body is not an object" };
    return { ok: true, fields: json.value };
  }
  // A Content-Type Tilda never sends (multipart, XML…) is refused, so a misconfigured URL shows at Tilda's test.
  if (media !== "" && media !== FORM && media !== "text/plain") {
    return { ok: false, detail: `Content-Type ${media} is neither a form (${FORM}) nor JSON` };
  }
  const form = readFormBody(body);
  return form.ok ? form : { ok: false, detail: form.detail };
}

type Block = { kind: "none" } | { kind: "malformed"; detail: string } | { kind: "payment"; payment: Fields };

/** Tilda sends the payment block as nested fields (`payment[orderid]=…`) or as one field holding JSON. */
function paymentBlock(value: unknown): Block {
  if (value === undefined || value === "") return { kind: "none" };
  if (isObject(value)) return { kind: "payment", payment: value };
  if (typeof value === "string") {
    const parsed = parseStrictJson(value);
    if (!parsed.ok) return { kind: "malformed", detail: `the payment field is not JSON: ${parsed.message}` };
    if (isObject(parsed.value)) return { kind: "payment", payment: parsed.value };
  }
  return { kind: "malformed", detail: "the payment field is not an object" };
}

/** event_id holds 128 characters, "tilda:" 6 of them. */
const MAX_ORDER_ID = 122;

function orderIdOf(value: unknown): string | { detail: string } {
  const orderId = text(value)?.trim();
  if (orderId === undefined || orderId === "")
    return { detail: "the payment block has no orderid to key the order by" };
  if (orderId.length > MAX_ORDER_ID) return { detail: `payment.orderid is longer than ${MAX_ORDER_ID} characters` };
  return orderId;
}

/**
 * The payment system's transaction id is the only evidence in Tilda's
 * payload that money moved. `sys=none` is a cart with no payment system
 * connected: with no payment step to wait for, Tilda sends it when the cart
 * form is submitted, with `systranid` "0", and no money has moved (cash on delivery, a manager's
 * call, an invoice later), so it is no payment, whatever else it carries.
 * An online payment system's cart needs its transaction id (Q11: whether
 * Tilda ever sends one before the payment is unconfirmed).
 */
function transactionOf(payment: Fields): { id: string } | { notPaid: string } {
  const sys = text(payment.sys)?.trim();
  if (sys?.toLowerCase() === "none") {
    return { notPaid: `no payment system (payment.sys is ${quoted(sys)}): the cart was not paid online` };
  }
  const systranid = text(payment.systranid)?.trim();
  if (systranid !== undefined && systranid !== "" && systranid !== "0") return { id: systranid };
  const given = systranid === undefined ? "is missing" : `is ${quoted(systranid)}`;
  return {
    notPaid:
      sys === undefined || sys === ""
        ? `no payment system and no transaction id (payment.sys is missing, payment.systranid ${given}): not paid`
        : `no transaction id from ${sys} (payment.systranid ${given}): not paid`,
  };
}

function idsOf(fields: Fields, payment: Fields): PlatformIds {
  const ids: Record<string, string> = {};
  for (const [name, value] of [
    ["tranid", fields.tranid],
    ["formid", fields.formid],
    ["formname", fields.formname],
    ["orderid", payment.orderid],
    ["systranid", payment.systranid],
    ["sys", payment.sys],
  ] as const) {
    const given = text(value);
    if (given !== undefined && given !== "") ids[name] = given.slice(0, 128);
  }
  return ids;
}

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
