/**
 * The life of an inbound event. SQL enforces the same set with a CHECK.
 *
 *   PROCESSING ──1C created/has it──▶ SUCCEEDED
 *        │  ╲──1C refused (422/409)──▶ FAILED_FINAL
 *        ▼
 *   FAILED_RETRYABLE (1C down, slow, 5xx) ──next attempt──▶ the same three exits
 *
 * PROCESSING and FAILED_RETRYABLE are "pending": the gateway still owns delivery.
 */
export const EventStatus = {
  PROCESSING: "PROCESSING",
  SUCCEEDED: "SUCCEEDED",
  FAILED_RETRYABLE: "FAILED_RETRYABLE",
  FAILED_FINAL: "FAILED_FINAL",
} as const;

export type EventStatus = (typeof EventStatus)[keyof typeof EventStatus];

export const ALL_STATUSES: readonly EventStatus[] = Object.values(EventStatus);

/** The gateway still owns delivery: the event will be attempted (again). */
export const PENDING_STATUSES: readonly EventStatus[] = [EventStatus.PROCESSING, EventStatus.FAILED_RETRYABLE];
/** Done: delivered, or given up until support replays it. Only these are ever purged. */
export const FINISHED_STATUSES: readonly EventStatus[] = [EventStatus.SUCCEEDED, EventStatus.FAILED_FINAL];

export function isFinished(status: EventStatus): boolean {
  return FINISHED_STATUSES.includes(status);
}
