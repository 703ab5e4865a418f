import type { ServerResponse } from "node:http";
import { isValidKey } from "../onec/contract/key.ts";
import { sendError, sendJson } from "./http-io.ts";
import type { OrderStore } from "./store.ts";

/** GET /v1/events/{id}: lets the gateway ask 1C what became of a delivery whose answer it never got. */
export function handleEventStatus(res: ServerResponse, store: OrderStore, encodedId: string): void {
  const id = decodeSegment(encodedId);
  // A key outside the alphabet was never accepted by POST, so it cannot be there (contract 2).
  const record = id === undefined || !isValidKey(id) ? undefined : store.get(id);
  if (record === undefined) {
    sendError(res, 404, "NOT_FOUND", `no event with id ${id ?? encodedId}`);
    return;
  }
  sendJson(res, 200, {
    event_id: id,
    status: "SUCCEEDED",
    order: record.order,
    correlation_id: record.correlationId,
    created_at: record.createdAt,
  });
}

/** Malformed percent-escapes cannot name a stored key, so they are simply not found. */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
