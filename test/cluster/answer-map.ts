import type { HttpAnswer } from "../support/http.ts";

const ORDERS_PAID = "/integration/v1/orders/paid";

/**
 * What the README's answer map allows for copies of one valid event sent at
 * once: 201 to the request that recorded it (if 1C answered within the sync
 * wait), 200 for a repeat of the finished event (the first answer's bytes,
 * Idempotent-Replayed: true), 202 while it is pending (status URL,
 * Retry-After). Returns each departure, described; none is the pass.
 */
export function answerMapDepartures(eventId: string, copies: readonly HttpAnswer[]): string[] {
  const departures: string[] = [];
  const statusUrl = `${ORDERS_PAID}/${eventId}`;
  const firsts = copies.filter((answer) => answer.status === 201);
  const finished = copies.find((answer) => answer.status === 200 || answer.status === 201);
  if (firsts.length > 1) departures.push(`${eventId}: ${firsts.length} answers 201, at most the recording one may be`);
  for (const answer of copies) {
    const where = `${eventId}: ${answer.status}`;
    if (![200, 201, 202].includes(answer.status)) {
      departures.push(`${where} is not an answer to a valid event (${answer.text.slice(0, 200)})`);
      continue;
    }
    if (answer.headers.location !== statusUrl) departures.push(`${where} Location ${answer.headers.location}`);
    if (answer.status === 201 && answer.headers["idempotent-replayed"] !== "false") {
      departures.push(`${where} without Idempotent-Replayed: false`);
    }
    if (answer.status === 201 || answer.status === 200) {
      const body = answer.json() as { status?: unknown; order?: { id?: unknown } | null };
      if (body.status !== "SUCCEEDED" || typeof body.order?.id !== "string") {
        departures.push(`${where} does not name 1C's order: ${answer.text.slice(0, 200)}`);
      }
    }
    if (answer.status === 200 && answer.headers["idempotent-replayed"] !== "true") {
      departures.push(`${where} without Idempotent-Replayed: true`);
    }
    if (finished !== undefined && (answer.status === 200 || answer.status === 201) && answer.text !== finished.text) {
      departures.push(
        `${where} body differs from the other finished answers': every repeat gets the first answer's bytes`,
      );
    }
    if (answer.status === 202) {
      if (answer.headers["retry-after"] === undefined) departures.push(`${where} without Retry-After`);
      const status = (answer.json() as { status?: unknown }).status;
      if (status !== "PROCESSING" && status !== "FAILED_RETRYABLE") departures.push(`${where} says ${String(status)}`);
    }
  }
  return departures;
}
