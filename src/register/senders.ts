/** Until sender authentication exists, every event belongs to this one sender. */
export const DEFAULT_SENDER = "default";
