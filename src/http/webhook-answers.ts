import type { WebhookOutcome } from "../accept/webhook-intake.ts";
import { EventStatus } from "../domain/event-status.ts";
import { statusUrl } from "../domain/first-answer.ts";
import type { SourceAdapter } from "../sources/port.ts";
import { type Answer, JSON_CONTENT_TYPE, problemAnswer } from "./answers.ts";

/**
 * The one place that maps a platform delivery's outcome to the answer the
 * platform gets. Unlike a sender's answers (answers.ts), everything recorded
 * is a 2xx: a platform reads a 4xx or 5xx as "not delivered", retries
 * (Shopify 8 times, Tilda twice), then drops the webhook; WooCommerce
 * disables it. So a payment 1C refused, a repeat with other content, an
 * unpaid update and an unmappable order are all 2xx, and support sees them.
 *
 * | outcome                      | "json" (Shopify, WooCommerce)           | "plain-ok" (Tilda) |
 * |------------------------------|-----------------------------------------|--------------------|
 * | ping, test request           | 200 {"status":"ok"}                     | 200 ok             |
 * | payment, 1C has it           | 201 first, 200 repeat                   | 200 ok             |
 * | payment, still in delivery   | 202 + status URL                        | 200 ok             |
 * | payment, 1C refused it       | 200, status FAILED_FINAL                | 200 ok             |
 * | ignored (not a payment)      | 200 {"status":"ignored", reason}        | 200 ok             |
 * | unmapped (kept for support)  | 202 {"status":"unmapped", reason}       | 200 ok             |
 * | bad or missing signature     | 401 webhook-signature                   | the same           |
 * | not the platform's format    | 400 webhook-malformed                   | the same           |
 */
export function webhookAnswerFor(outcome: WebhookOutcome, adapter: SourceAdapter, correlationId: string): Answer {
  if (outcome.kind === "unauthorized") {
    return problemAnswer("GW_ERR_WEBHOOK_SIGNATURE", correlationId, {
      detail: `${outcome.detail}; nothing was recorded`,
    });
  }
  if (outcome.kind === "malformed") {
    return problemAnswer("GW_ERR_WEBHOOK_MALFORMED", correlationId, {
      detail: `${outcome.detail}; nothing was recorded`,
    });
  }
  if (adapter.answerStyle === "plain-ok")
    return { status: 200, contentType: PLAIN_CONTENT_TYPE, headers: {}, body: "ok" };
  switch (outcome.kind) {
    case "ping":
      return json(200, { status: "ok" });
    case "ignored":
    case "unmapped":
      return json(outcome.kind === "ignored" ? 200 : 202, {
        status: outcome.kind,
        reason: outcome.delivery.reason,
        delivery_id: outcome.delivery.id,
      });
    case "event": {
      const { record, firstAnswer } = outcome.result;
      const location = statusUrl(record.eventId);
      const body = { event_id: record.eventId, status: record.status, status_url: location };
      const headers = { location };
      if (record.status === EventStatus.SUCCEEDED) {
        return { ...json(firstAnswer ? 201 : 200, { ...body, order: record.order }), headers };
      }
      if (record.status === EventStatus.FAILED_FINAL) {
        return { ...json(200, { ...body, error: record.lastError }), headers };
      }
      return { ...json(202, body), headers };
    }
  }
}

const PLAIN_CONTENT_TYPE = "text/plain; charset=utf-8";

function json(status: number, body: unknown): Answer {
  return { status, contentType: JSON_CONTENT_TYPE, headers: {}, body: JSON.stringify(body) };
}
