import type { ServerResponse } from "node:http";
import { isValidKey } from "../onec/contract/key.ts";
import type { EmulatorFaults } from "./faults.ts";
import { sendError, sendJson } from "./http-io.ts";
import type { KeyLocks } from "./key-locks.ts";
import type { OrderStore } from "./store.ts";

export interface EventStatusContext {
  readonly store: OrderStore;
  readonly locks: KeyLocks;
  readonly closing: AbortSignal;
  faults(): Pick<EmulatorFaults, "lockWaitMs">;
}

/**
 * GET /v1/events/{id}: lets the gateway ask 1C what became of a delivery whose answer it never got.
 * As the extension's СостояниеСобытия, it reads under a shared lock on the key: an order still
 * posting is waited for, and a wait past 1C's lock timeout is 503, never a premature 404.
 */
export async function handleEventStatus(
  res: ServerResponse,
  ctx: EventStatusContext,
  encodedId: string,
): Promise<void> {
  const id = decodeSegment(encodedId);
  // A key outside the alphabet was never accepted by POST, so it cannot be there (contract 2).
  const valid = id !== undefined && isValidKey(id);
  if (valid && !(await ctx.locks.freeWithin(id.toLowerCase(), ctx.faults().lockWaitMs, ctx.closing))) {
    sendError(
      res,
      503,
      "UNAVAILABLE",
      "1C could not read the event now (an order under its key may still be being created); retry later",
      {
        "retry-after": "5",
      },
    );
    return;
  }
  const record = valid ? ctx.store.get(id) : undefined;
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
