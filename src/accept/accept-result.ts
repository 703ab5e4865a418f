import type { EventRecord } from "../register/port.ts";

/** What accepting one request came to; the HTTP edge maps it to an answer. */
export type AcceptResult =
  /** The same event_id was recorded with another body. */
  | { kind: "conflict"; record: EventRecord }
  /** The recorded event; `firstAnswer` is true for the request that recorded it. */
  | { kind: "event"; record: EventRecord; firstAnswer: boolean };
