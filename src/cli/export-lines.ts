import { type Static, type TSchema, Type } from "typebox";
import { Compile } from "typebox/compile";
import { SENDER_ID_PATTERN } from "../config/senders.ts";
import { ALL_STATUSES } from "../domain/event-status.ts";
import { EVENT_ID_PATTERN } from "../domain/order-paid.ts";
import type { AttemptKind } from "../register/port.ts";
import type { EventRow } from "../register/rows.ts";
import { ATTEMPT_KINDS } from "../views/event-views.ts";

/**
 * What each line of the file `gateway export` writes and `gateway import`
 * reads may hold, version by version: NDJSON, one JSON object per line.
 *
 *   line 1       {"type":"header","format":"onec-order-gateway/register","version":3,"exported_at":…,"exported_from":…}
 *   then         {"type":"event","event":{…every column of inbound_events…},"delivery_attempts":[…],"event_replays":[…],
 *                 "source_delivery":{…the accepted platform delivery's columns…} or null}
 *   then         {"type":"source_delivery","source_delivery":{…every column of source_deliveries but id…}}
 *   last line    {"type":"end","events":N,"source_deliveries":M}
 *
 * Keys are the register's column names; times are epoch milliseconds, as the
 * register keeps them, so nothing is rounded on the way. The end line tells a
 * complete export from one cut short. A format change bumps the version.
 *
 * A platform's delivery (source-port.ts) is the only record of an unmapped
 * order, so it moves too: an accepted one inside its event's line (its sender
 * and event_id are the event's), the ignored and unmapped ones on lines of
 * their own, oldest first, after every event, so that a remapped one finds
 * its event already in. Their ids are not carried: the target numbers them.
 *
 *   version 1    delivery attempts without `kind`: they were all claimed just in time
 *   version 2    each delivery attempt has `kind`, "just_in_time" or "ahead"
 *   version 3    the platforms' deliveries: `source_delivery` on each event line, the
 *                "source_delivery" lines, and their count in the end line
 *   version 4    each event has `trace_context`: the W3C trace context it was accepted under,
 *                or null; an event from an earlier version has none
 *   version 5    each "source_delivery" line has `remapped_by` and `remap_reason`: who mapped
 *                it again and why, or null; a delivery from an earlier version has neither
 */

export const EXPORT_FORMAT = "onec-order-gateway/register";
export const EXPORT_VERSION = 5;
/** What import reads: this version and every one before it, so an older gateway's export moves forward. */
export const READABLE_VERSIONS = [1, 2, 3, 4, 5] as const;
export type ExportVersion = (typeof READABLE_VERSIONS)[number];

const nullable = <T extends TSchema>(type: T) => Type.Union([type, Type.Null()]);
const Time = Type.Integer({ minimum: 0 });
const Count = Type.Integer({ minimum: 0 });
const Status = Type.Enum(ALL_STATUSES);

const eventColumns = {
  sender: Type.String({ pattern: SENDER_ID_PATTERN.source }),
  event_id: Type.String({ pattern: EVENT_ID_PATTERN.source }),
  fingerprint: Type.String(),
  policy_version: Type.String(),
  status: Status,
  correlation_id: Type.String(),
  body: Type.String(),
  response_status: nullable(Type.Integer({ minimum: 100, maximum: 599 })),
  response_body: nullable(Type.String()),
  order_id: nullable(Type.String()),
  order_number: nullable(Type.String()),
  last_error: nullable(Type.String()),
  last_error_class: nullable(Type.String()),
  attempts: Count,
  finished_attempts: Count,
  round_attempts: Count,
  round_started_at: Time,
  lease_owner: nullable(Type.String()),
  lease_token: Count,
  lease_until: nullable(Time),
  next_attempt_at: nullable(Time),
  received_at: Time,
  updated_at: Time,
};
/** Before version 4: no trace context. */
const EventColumnsV3 = Type.Object(eventColumns, { additionalProperties: false });
const EventColumns = Type.Object(
  { ...eventColumns, trace_context: nullable(Type.String()) },
  { additionalProperties: false },
);

const attemptFields = {
  attempt: Count,
  lease_token: Count,
  worker: Type.String(),
  started_at: Time,
  finished_at: nullable(Time),
  duration_ms: nullable(Count),
  outcome: nullable(Type.String()),
  http_status: nullable(Type.Integer()),
  error_class: nullable(Type.String()),
  detail: nullable(Type.String()),
  applied: nullable(Type.Boolean()),
};
const AttemptColumnsV1 = Type.Object(attemptFields, { additionalProperties: false });
const AttemptColumns = Type.Object(
  { ...attemptFields, kind: Type.Enum([...ATTEMPT_KINDS]) },
  { additionalProperties: false },
);

const ReplayColumns = Type.Object(
  {
    requested_by: Type.String(),
    reason: Type.String(),
    forced: Type.Boolean(),
    from_status: Type.String(),
    requested_at: Time,
  },
  { additionalProperties: false },
);

/** What a platform's delivery says of itself, in every line that carries one. */
const sourceFields = {
  platform: Type.String({ minLength: 1 }),
  key: Type.String({ minLength: 1 }),
  reason: nullable(Type.String()),
  ids: Type.String(),
  payload: Type.String(),
  content_type: nullable(Type.String()),
  correlation_id: Type.String(),
  received_at: Time,
};
/** An event's accepted delivery: its sender, event_id and outcome are the event's own. */
const AcceptedSourceColumns = Type.Object(sourceFields, { additionalProperties: false });
/** A delivery no event was made from (or one remapped since): every column but the id. */
const SourceColumns = Type.Object(
  {
    sender: Type.String({ pattern: SENDER_ID_PATTERN.source }),
    ...sourceFields,
    outcome: Type.Enum(["ignored", "unmapped"]),
    event_id: nullable(Type.String({ pattern: EVENT_ID_PATTERN.source })),
    remapped_at: nullable(Time),
    // Optional: an export before version 5 has neither.
    remapped_by: Type.Optional(nullable(Type.String())),
    remap_reason: Type.Optional(nullable(Type.String())),
  },
  { additionalProperties: false },
);

const eventFields = <A extends TSchema, E extends TSchema>(attempt: A, event: E) => ({
  type: Type.Literal("event"),
  event,
  delivery_attempts: Type.Array(attempt),
  event_replays: Type.Array(ReplayColumns),
});
const EventLineV1 = Type.Object(eventFields(AttemptColumnsV1, EventColumnsV3), { additionalProperties: false });
const EventLineV2 = Type.Object(eventFields(AttemptColumns, EventColumnsV3), { additionalProperties: false });
const sourceDeliveryField = { source_delivery: nullable(AcceptedSourceColumns) };
const EventLineV3 = Type.Object(
  { ...eventFields(AttemptColumns, EventColumnsV3), ...sourceDeliveryField },
  { additionalProperties: false },
);
export const EventLine = Type.Object(
  { ...eventFields(AttemptColumns, EventColumns), ...sourceDeliveryField },
  { additionalProperties: false },
);
export const SourceLine = Type.Object(
  { type: Type.Literal("source_delivery"), source_delivery: SourceColumns },
  { additionalProperties: false },
);

export const HeaderLine = Type.Object({
  type: Type.Literal("header"),
  format: Type.Literal(EXPORT_FORMAT),
  version: Type.Integer(),
  exported_at: Type.String(),
  exported_from: Type.String(),
});

const EndLineV2 = Type.Object({ type: Type.Literal("end"), events: Count }, { additionalProperties: false });
export const EndLine = Type.Object(
  { type: Type.Literal("end"), events: Count, source_deliveries: Count },
  { additionalProperties: false },
);

export type EventLine = Static<typeof EventLine>;
export type AcceptedSourceLine = Static<typeof AcceptedSourceColumns>;
export type SourceLine = Static<typeof SourceLine>;
export type AttemptLine = Static<typeof AttemptColumns>;
export type ReplayLine = Static<typeof ReplayColumns>;
/** An attempt as any readable version writes it: without `kind` before version 2. */
export type ReadAttempt = Static<typeof AttemptColumnsV1> & { kind?: AttemptKind };
/** An event line of any readable version: without `source_delivery` before version 3, nor `trace_context` before 4. */
export type ReadEventLine = Omit<EventLine, "event" | "delivery_attempts" | "source_delivery"> & {
  event: Omit<EventRow, "trace_context"> & { trace_context?: string | null };
  delivery_attempts: ReadAttempt[];
  source_delivery?: AcceptedSourceLine | null;
};

export const eventLineV1 = Compile(EventLineV1);
export const eventLineV2 = Compile(EventLineV2);
export const eventLineV3 = Compile(EventLineV3);
export const eventLine = Compile(EventLine);
export const sourceLine = Compile(SourceLine);
export const headerLine = Compile(HeaderLine);
export const endLineV2 = Compile(EndLineV2);
export const endLine = Compile(EndLine);
