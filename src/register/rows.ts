import type { EventStatus } from "../domain/event-status.ts";
import type { AttemptKind, AttemptRecord, Claim, EventRecord, ReplayRecord } from "./port.ts";
import type { ConsoleSession } from "./session-port.ts";
import type { MovedDelivery, RemapAudit, SourceDelivery, SourceDeliveryInput, SourceOutcome } from "./source-port.ts";

/**
 * The register's rows, defined once: each table's columns in table order with
 * their SQL types, the row type every backend's SQL returns (snake_case, times
 * in epoch ms, flags as 0/1), and the mapping between rows and the port's
 * records. Backends spell their statements from these lists; the schema
 * itself is in each backend's migrations.
 */

/** A column's type as both backends declare it; "?" marks a nullable column; a flag is 0/1 (boolean in PostgreSQL). */
type ColumnType = "text" | "integer" | "bigint" | "flag" | "text?" | "integer?" | "bigint?" | "flag?";
type ValueOf<T> = T extends `${infer Base}?` ? ValueOf<Base> | null : T extends "text" ? string : number;
type RowOf<Columns> = { -readonly [Name in keyof Columns]: ValueOf<Columns[Name]> };
/** The same column in a port record: named in camelCase, a flag as a boolean. */
type FieldOf<T> = T extends `${infer Base}?` ? FieldOf<Base> | null : T extends "flag" ? boolean : ValueOf<T>;
type Camel<Name> = Name extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : Name;
type RecordOf<Columns> = { -readonly [Name in keyof Columns as Camel<Name>]: FieldOf<Columns[Name]> };

export const EVENT_COLUMNS = {
  sender: "text",
  event_id: "text",
  fingerprint: "text",
  policy_version: "text",
  status: "text",
  correlation_id: "text",
  body: "text",
  response_status: "integer?",
  response_body: "text?",
  order_id: "text?",
  order_number: "text?",
  last_error: "text?",
  last_error_class: "text?",
  attempts: "integer",
  finished_attempts: "integer",
  round_attempts: "integer",
  round_started_at: "bigint",
  lease_owner: "text?",
  lease_token: "bigint",
  lease_until: "bigint?",
  next_attempt_at: "bigint?",
  received_at: "bigint",
  updated_at: "bigint",
  /** port.ts ReserveRequest.traceContext (migration 0008). */
  trace_context: "text?",
} as const satisfies Record<string, ColumnType>;

/** delivery_attempts without its key (id, sender, event_id): what an attempt says. */
export const ATTEMPT_COLUMNS = {
  attempt: "integer",
  lease_token: "bigint",
  worker: "text",
  started_at: "bigint",
  finished_at: "bigint?",
  duration_ms: "integer?",
  outcome: "text?",
  http_status: "integer?",
  error_class: "text?",
  detail: "text?",
  applied: "flag?",
  /** port.ts AttemptKind (migration 0005). */
  kind: "text",
} as const satisfies Record<string, ColumnType>;

/** event_replays without its key (id, sender, event_id). */
export const REPLAY_COLUMNS = {
  requested_by: "text",
  reason: "text",
  forced: "flag",
  from_status: "text",
  requested_at: "bigint",
} as const satisfies Record<string, ColumnType>;

/** console_sessions (migration 0004). */
export const SESSION_COLUMNS = {
  id_digest: "text",
  operator: "text",
  credential_digest: "text",
  csrf_token: "text",
  created_at: "bigint",
  expires_at: "bigint",
  last_used_at: "bigint",
  idle_ms: "bigint",
} as const satisfies Record<string, ColumnType>;

/** source_deliveries as a delivery writes it (migration 0006): without its id and its remapping. */
const SOURCE_WRITTEN_COLUMNS = {
  sender: "text",
  platform: "text",
  key: "text",
  /** source-port.ts SourceOutcome. */
  outcome: "text",
  reason: "text?",
  event_id: "text?",
  ids: "text",
  payload: "text",
  content_type: "text?",
  correlation_id: "text",
  received_at: "bigint",
} as const satisfies Record<string, ColumnType>;

/** source_deliveries (migration 0006). */
export const SOURCE_COLUMNS = {
  id: "bigint",
  ...SOURCE_WRITTEN_COLUMNS,
  remapped_at: "bigint?",
  remapped_by: "text?",
  remap_reason: "text?",
} as const satisfies Record<string, ColumnType>;

export type EventRow = Omit<RowOf<typeof EVENT_COLUMNS>, "status"> & { status: EventStatus };
/**
 * SQLite's inbound_events columns beside EVENT_COLUMNS that no record holds:
 * the body's order.id and order.number, the console's search keys (its
 * migration 0009; PostgreSQL indexes them as expressions over the body, and
 * ignores these). A reservation writes them from ReserveRequest; an import,
 * from the body.
 */
export interface SearchKeyColumns {
  site_order_id: string | null;
  site_order_number: string | null;
}
export const SEARCH_KEY_COLUMNS = [
  "site_order_id",
  "site_order_number",
] as const satisfies readonly (keyof SearchKeyColumns)[];
export type AttemptRow = Omit<RowOf<typeof ATTEMPT_COLUMNS>, "kind"> & { kind: AttemptKind };
export type ReplayRow = RowOf<typeof REPLAY_COLUMNS>;
export type SessionRow = RowOf<typeof SESSION_COLUMNS>;
export type SourceRow = Omit<RowOf<typeof SOURCE_COLUMNS>, "outcome"> & { outcome: SourceOutcome };
/** A source row as inserted: the database numbers it, and it is not remapped yet. */
export type NewSourceRow = Omit<SourceRow, "id" | (typeof REMAP_COLUMNS)[number]>;

/** A source row as another register held it (`gateway import`): all but the id, which the database gives anew. */
export type MovedSourceRow = Omit<SourceRow, "id">;

/** source_deliveries' column names, for a backend's insert. */
export const NEW_SOURCE_COLUMNS = columnNames(SOURCE_WRITTEN_COLUMNS);
/** Who remapped a delivery and why, as both backends write them: an operator's text, made storable as 1C's is. */
export function remapAuditValues(audit: RemapAudit): { by: string; reason: string } {
  return { by: storableText(audit.by), reason: storableText(audit.reason) };
}

/** A remapping's columns, written together by markRemapped (migrations 0006 and 0010). */
const REMAP_COLUMNS = ["remapped_at", "remapped_by", "remap_reason"] as const;
/** The same with the remapping's: what importDelivery inserts. */
export const MOVED_SOURCE_COLUMNS = [...NEW_SOURCE_COLUMNS, ...REMAP_COLUMNS] as const;

/** A table's column names, in table order. */
export function columnNames<Columns extends Record<string, ColumnType>>(columns: Columns): (keyof Columns & string)[] {
  return Object.keys(columns);
}

/** How one column maps: its row name, its record name, and whether it is a 0/1 flag. */
interface ColumnMapping {
  column: string;
  field: string;
  flag: boolean;
}

/**
 * Worked out once per table, not per row: the register maps a row on every
 * request (a repeat's read, a new event's reservation), and a camelCase
 * regex and a type test per column per row showed as 8 % of the accept
 * path's CPU under load.
 */
const mappings = new WeakMap<Record<string, ColumnType>, readonly ColumnMapping[]>();

function mappingOf(columns: Record<string, ColumnType>): readonly ColumnMapping[] {
  let mapping = mappings.get(columns);
  if (mapping === undefined) {
    mapping = Object.entries(columns).map(([column, type]) => ({
      column,
      field: camelCase(column),
      flag: type.startsWith("flag"),
    }));
    mappings.set(columns, mapping);
  }
  return mapping;
}

/** A row as the port's record: each column under its camelCase name, flags as booleans. */
function recordOf<Columns extends Record<string, ColumnType>>(
  columns: Columns,
  row: RowOf<Columns>,
): RecordOf<Columns> {
  const values: Record<string, unknown> = row;
  const record: Record<string, unknown> = {};
  for (const { column, field, flag } of mappingOf(columns)) {
    const value = values[column];
    record[field] = flag && value !== null ? value === 1 : value;
  }
  return record as RecordOf<Columns>;
}

/** The other way: a record's fields as the row's columns, in table order, flags as 0/1. */
function rowOf<Columns extends Record<string, ColumnType>>(
  columns: Columns,
  record: RecordOf<Columns>,
): RowOf<Columns> {
  const fields: Record<string, unknown> = record;
  const row: Record<string, unknown> = {};
  for (const { column, field, flag } of mappingOf(columns)) {
    const value = fields[field];
    row[column] = flag && value !== null ? Number(value) : value;
  }
  return row as RowOf<Columns>;
}

function camelCase(name: string): string {
  return name.replace(/_(.)/g, (_, letter: string) => letter.toUpperCase());
}

export function claimOf(row: EventRow): Claim {
  return {
    record: toRecord(row),
    lease: { sender: row.sender, eventId: row.event_id, owner: row.lease_owner ?? "", token: row.lease_token },
  };
}

/**
 * The record's response and order are each two columns, both set or both
 * null. Written out field by field: it runs on every request, and a rest
 * spread over the generic mapping cost as much again.
 */
export function toRecord(row: EventRow): EventRecord {
  return {
    sender: row.sender,
    eventId: row.event_id,
    fingerprint: row.fingerprint,
    policyVersion: row.policy_version,
    status: row.status,
    correlationId: row.correlation_id,
    body: row.body,
    lastError: row.last_error,
    lastErrorClass: row.last_error_class,
    attempts: row.attempts,
    finishedAttempts: row.finished_attempts,
    roundAttempts: row.round_attempts,
    roundStartedAt: row.round_started_at,
    leaseOwner: row.lease_owner,
    leaseToken: row.lease_token,
    leaseUntil: row.lease_until,
    nextAttemptAt: row.next_attempt_at,
    receivedAt: row.received_at,
    updatedAt: row.updated_at,
    // Undefined rather than null without one: a record compares equal to one written before the column.
    traceContext: row.trace_context ?? undefined,
    response:
      row.response_status === null || row.response_body === null
        ? null
        : { status: row.response_status, body: row.response_body },
    order: row.order_id === null || row.order_number === null ? null : { id: row.order_id, number: row.order_number },
  };
}

/** The other way: a record as the row it came from (`gateway export` writes rows, importEvent inserts them). */
export function toRow(record: EventRecord): EventRow {
  const { response, order, ...fields } = record;
  const row = rowOf(EVENT_COLUMNS, {
    ...fields,
    responseStatus: response?.status ?? null,
    responseBody: response?.body ?? null,
    orderId: order?.id ?? null,
    orderNumber: order?.number ?? null,
    traceContext: record.traceContext ?? null,
  });
  return { ...row, status: record.status };
}

export function toAttempt(row: AttemptRow): AttemptRecord {
  return { ...recordOf(ATTEMPT_COLUMNS, row), kind: row.kind };
}

/** An attempt from an export that predates kinds was claimed just in time: nothing else existed. */
export function attemptRow(attempt: AttemptRecord): AttemptRow {
  const kind = attempt.kind ?? "just_in_time";
  return { ...rowOf(ATTEMPT_COLUMNS, { ...attempt, kind }), kind };
}

export function toReplay(row: ReplayRow): ReplayRecord {
  return recordOf(REPLAY_COLUMNS, row);
}

export function replayRow(replay: ReplayRecord): ReplayRow {
  return rowOf(REPLAY_COLUMNS, replay);
}

export function toSession(row: SessionRow): ConsoleSession {
  return recordOf(SESSION_COLUMNS, row);
}

export function toSource(row: SourceRow): SourceDelivery {
  return { ...recordOf(SOURCE_COLUMNS, row), outcome: row.outcome };
}

/** A delivery as another register held it (movedSourceRow's inverse): without the id its register gave it. */
export function toMovedSource(row: MovedSourceRow): MovedDelivery {
  const { id: _id, ...moved } = toSource({ ...row, id: 0 });
  return moved;
}

/**
 * Text others wrote, as the register can keep it: PostgreSQL's text cannot
 * hold U+0000, and one such character failed the whole batch it came in,
 * unrelated events with it, again at every try. A sender's event with U+0000
 * is refused at the door (422), and so is a platform's body (400); what 1C
 * answers (its order's id and number, its answer, its error message) is not
 * ours to refuse, nor is a platform's value quoted in a delivery's reason
 * ("unknown SKU …"), so the character is kept as U+FFFD, as a decoder keeps
 * what it cannot read.
 */
export function storableText(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
}

/**
 * What SourceDeliveryLog.record inserts: an ignored or unmapped delivery,
 * belonging to no event. Accepted ones come only with their event (acceptedSourceRow).
 */
export function recordedSourceRow(delivery: SourceDeliveryInput): NewSourceRow {
  if (delivery.outcome === "accepted") {
    throw new TypeError("an accepted delivery is recorded by reserve (ReserveRequest.source), with its event");
  }
  return {
    ...rowOf(SOURCE_WRITTEN_COLUMNS, { ...storableDelivery(delivery), eventId: null }),
    outcome: delivery.outcome,
  };
}

/**
 * What a reserve that creates its event inserts with it: the delivery under
 * the event's own key (its foreign key), accepted, whatever the request's
 * source said of those.
 */
export function acceptedSourceRow(request: {
  sender: string;
  eventId: string;
  source: SourceDeliveryInput;
}): NewSourceRow {
  const { sender, eventId, source } = request;
  return { ...rowOf(SOURCE_WRITTEN_COLUMNS, { ...storableDelivery(source), sender, eventId }), outcome: "accepted" };
}

/**
 * A delivery's reason quotes the platform's values (a SKU), which the gateway does not refuse; its
 * payload holds no raw NUL since the door refuses one, but a register written before that may
 * (`gateway import` from SQLite into PostgreSQL).
 */
function storableDelivery<Delivery extends { reason: string | null; payload: string }>(delivery: Delivery): Delivery {
  return {
    ...delivery,
    reason: delivery.reason === null ? null : storableText(delivery.reason),
    payload: storableText(delivery.payload),
  };
}

/**
 * What SourceDeliveryLog.importDelivery inserts: an ignored or unmapped
 * delivery with its event and remapping as the register it came from held
 * them. Accepted ones come only with their event (importRows in rules.ts).
 */
export function movedSourceRow(
  delivery: MovedDelivery,
): MovedSourceRow & { outcome: Exclude<SourceOutcome, "accepted"> } {
  if (delivery.outcome === "accepted") {
    throw new TypeError("an accepted delivery is imported with its event (EventSnapshot.source)");
  }
  const { remappedAt, remappedBy, remapReason, ...written } = delivery;
  return {
    ...rowOf(SOURCE_WRITTEN_COLUMNS, storableDelivery(written)),
    outcome: delivery.outcome,
    remapped_at: remappedAt,
    remapped_by: remappedBy,
    remap_reason: remapReason === null ? null : storableText(remapReason),
  };
}
