import type { SourceDeliveryInput } from "../../src/register/source-port.ts";
import { T0 } from "./records.ts";

/**
 * Kept platform deliveries as the webhook intake records them (keys as the
 * adapters make them, ids as `{ids, headers}`), for the register's tests:
 * one paid Shopify order, one unpaid WooCommerce update, one Tilda order
 * whose SKU is unknown. Each takes a patch.
 */

/** A Shopify orders/paid delivery that became the event shopify:<order id>. */
export function shopifyPaid(patch: Partial<SourceDeliveryInput> = {}): SourceDeliveryInput {
  return {
    sender: "shop-main",
    platform: "shopify",
    key: "shopify:820982911946154508",
    outcome: "accepted",
    reason: null,
    ids: JSON.stringify({
      ids: {
        webhook_id: "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
        event_id: "98880550-7158-44d4-b7cd-2c97c8a091b5",
        topic: "orders/paid",
        shop_domain: "example.myshopify.com",
      },
      headers: { "content-type": "application/json", "x-shopify-topic": "orders/paid" },
    }),
    payload: '{"id":820982911946154508,"financial_status":"paid","currency":"RUB","total_price":"1990.00"}',
    contentType: "application/json",
    correlationId: "corr-shopify-1",
    receivedAt: T0,
    ...patch,
  };
}

/** A WooCommerce order.updated delivery whose order is not paid yet: acknowledged and ignored. */
export function wooUnpaid(patch: Partial<SourceDeliveryInput> = {}): SourceDeliveryInput {
  return {
    sender: "shop-woo",
    platform: "woocommerce",
    key: "woocommerce:1042",
    outcome: "ignored",
    reason: 'status is "pending" and date_paid_gmt is null: not paid',
    ids: JSON.stringify({
      ids: { webhook_id: "7", delivery_id: "a1b2c3", topic: "order.updated", order_id: "1042" },
      headers: { "content-type": "application/json", "x-wc-webhook-topic": "order.updated" },
    }),
    payload: '{"id":1042,"status":"pending","date_paid_gmt":null,"currency":"RUB"}',
    contentType: "application/json",
    correlationId: "corr-woo-1",
    receivedAt: T0,
    ...patch,
  };
}

/** A paid Tilda order naming a SKU the sender's map does not know: acknowledged, kept, nothing sent to 1C. */
export function tildaUnmapped(patch: Partial<SourceDeliveryInput> = {}): SourceDeliveryInput {
  return {
    sender: "shop-tilda",
    platform: "tilda",
    key: "tilda:1234567890",
    outcome: "unmapped",
    reason: 'unknown SKU "TSH-XL-RED": not in the sender\'s SKU map',
    ids: JSON.stringify({
      ids: { formid: "form5551234", tranid: "5551234:1234567890", orderid: "1234567890" },
      headers: { "content-type": "application/x-www-form-urlencoded" },
    }),
    payload: "tranid=5551234%3A1234567890&formid=form5551234&payment%5Borderid%5D=1234567890&payment%5Bamount%5D=1990",
    contentType: "application/x-www-form-urlencoded",
    correlationId: "corr-tilda-1",
    receivedAt: T0,
    ...patch,
  };
}
