/**
 * The sender of anonymous traffic (ALLOW_ANONYMOUS=true, no tokens configured).
 * Its events go to 1C under their bare event_id; named senders' are prefixed.
 */
export const DEFAULT_SENDER = "default";
