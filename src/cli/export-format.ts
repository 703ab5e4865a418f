import type { Static } from "typebox";
import type { AttemptRecord, EventRecord, EventSnapshot, ReplayRecord } from "../register/port.ts";
import { acceptedSourceRow, type EventRow, movedSourceRow, toMovedSource, toRecord, toRow } from "../register/rows.ts";
import type { MovedDelivery, SourceDeliveryInput } from "../register/source-port.ts";
import {
  type AcceptedSourceLine,
  type AttemptLine,
  type EndLine,
  type EventLine,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type ExportVersion,
  endLine,
  endLineV2,
  eventLine,
  eventLineV1,
  eventLineV2,
  eventLineV3,
  type HeaderLine,
  headerLine,
  READABLE_VERSIONS,
  type ReadAttempt,
  type ReadEventLine,
  type ReplayLine,
  type SourceLine,
  sourceLine,
} from "./export-lines.ts";

/**
 * Writes and reads the lines of a register export, whose format and versions
 * export-lines.ts sets out: each line made from the register's records, and
 * each line read back into them, checked against its version's schema.
 */

export interface ExportHeader {
  exportedAt: string;
  /** Where the events came from, for the reader: the file, or the server without its password. */
  exportedFrom: string;
}

export function headerText(header: ExportHeader): string {
  const line: Static<typeof HeaderLine> = {
    type: "header",
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exported_at: header.exportedAt,
    exported_from: header.exportedFrom,
  };
  return JSON.stringify(line);
}

export function eventText(snapshot: EventSnapshot): string {
  const line: EventLine = {
    type: "event",
    event: toRow(snapshot.record),
    delivery_attempts: snapshot.attempts.map(attemptLine),
    event_replays: snapshot.replays.map(replayLine),
    source_delivery: snapshot.source === undefined ? null : acceptedSourceLine(snapshot.record, snapshot.source),
  };
  return JSON.stringify(line);
}

/** An ignored or unmapped delivery, remapped or not: an accepted one goes in its event's line. */
export function sourceText(delivery: MovedDelivery): string {
  if (delivery.outcome === "accepted") throw new TypeError("an accepted delivery is written with its event");
  const line: SourceLine = { type: "source_delivery", source_delivery: movedSourceRow(delivery) };
  return JSON.stringify(line);
}

export function endText(counts: { events: number; sourceDeliveries: number }): string {
  const line: Static<typeof EndLine> = {
    type: "end",
    events: counts.events,
    source_deliveries: counts.sourceDeliveries,
  };
  return JSON.stringify(line);
}

/** A line that is not what the format allows there; the message says why, without the line number. */
export class BadLine extends Error {
  override readonly name = "BadLine";
}

/** What one line after the header holds; an end line before version 3 does not count deliveries. */
export type ExportLine =
  | { type: "event"; snapshot: EventSnapshot }
  | { type: "source_delivery"; delivery: MovedDelivery }
  | { type: "end"; events: number; sourceDeliveries?: number };

/** The header as read: the version tells how to read the lines after it. */
export interface ReadHeader extends ExportHeader {
  version: ExportVersion;
}

/** The first line: refuses anything but a header of a version this gateway reads. */
export function readHeader(text: string): ReadHeader {
  const value = parse(text);
  if (!isObject(value) || value.type !== "header" || value.format !== EXPORT_FORMAT) {
    throw new BadLine(
      `not a gateway register export: its first line must be {"type":"header","format":"${EXPORT_FORMAT}",…}`,
    );
  }
  const version = READABLE_VERSIONS.find((known) => known === value.version);
  if (version === undefined) {
    throw new BadLine(
      `format version ${JSON.stringify(value.version)} is not one this gateway reads (it reads versions ${READABLE_VERSIONS.join(", ")}): import with the gateway version that exported it`,
    );
  }
  if (!headerLine.Check(value)) throw new BadLine(firstError(headerLine.Errors(value)));
  return { exportedAt: value.exported_at, exportedFrom: value.exported_from, version };
}

/** Any line after the header, read as its header's `version` writes it. */
export function readLine(text: string, version: ExportVersion): ExportLine {
  const value = parse(text);
  if (!isObject(value)) throw new BadLine("not a JSON object");
  switch (value.type) {
    case "event":
      return { type: "event", snapshot: snapshotOf(checkedEvent(value, version)) };
    case "source_delivery":
      if (version < 3) throw new BadLine(`a "source_delivery" line in a version ${version} export, which has none`);
      if (!sourceLine.Check(value)) throw new BadLine(firstError(sourceLine.Errors(value)));
      return { type: "source_delivery", delivery: movedDelivery(value) };
    case "end":
      return checkedEnd(value, version);
    case "header":
      throw new BadLine("a second header: two exports joined into one input?");
    default:
      throw new BadLine(
        `"type" must be "event", "source_delivery" or "end", got ${JSON.stringify(value.type) ?? "nothing"}`,
      );
  }
}

/**
 * Each version's own schema: a version 1 attempt with `kind`, a version 2 one without, or a
 * `trace_context` before version 4, breaks the format.
 */
function checkedEvent(value: unknown, version: ExportVersion): ReadEventLine {
  const schema = [eventLineV1, eventLineV2, eventLineV3, eventLine][version - 1] ?? eventLine;
  if (!schema.Check(value)) throw new BadLine(firstError(schema.Errors(value)));
  return value;
}

function checkedEnd(value: unknown, version: ExportVersion): ExportLine {
  if (version < 3) {
    if (!endLineV2.Check(value)) throw new BadLine(firstError(endLineV2.Errors(value)));
    return { type: "end", events: value.events };
  }
  if (!endLine.Check(value)) throw new BadLine(firstError(endLine.Errors(value)));
  return { type: "end", events: value.events, sourceDeliveries: value.source_deliveries };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BadLine(`not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What the schema cannot say: the pairs the register writes together, and the fencing tokens. */
function snapshotOf(line: ReadEventLine): EventSnapshot {
  const row: EventRow = { ...line.event, trace_context: line.event.trace_context ?? null };
  if ((row.response_status === null) !== (row.response_body === null)) {
    throw new BadLine("/event: response_status and response_body are written together: both or neither");
  }
  if ((row.order_id === null) !== (row.order_number === null)) {
    throw new BadLine("/event: order_id and order_number are written together: both or neither");
  }
  const tokens = new Set<number>();
  line.delivery_attempts.forEach((attempt, index) => {
    // A later claim takes lease_token + 1: an attempt above it would collide with that claim's own row.
    if (attempt.lease_token > row.lease_token) {
      throw new BadLine(
        `/delivery_attempts/${index}/lease_token: ${attempt.lease_token} is above the event's lease_token ${row.lease_token}`,
      );
    }
    if (tokens.has(attempt.lease_token)) {
      throw new BadLine(`/delivery_attempts/${index}/lease_token: ${attempt.lease_token} appears twice`);
    }
    tokens.add(attempt.lease_token);
  });
  const source = line.source_delivery ?? null;
  return {
    record: toRecord(row),
    attempts: line.delivery_attempts.map(attemptRecord),
    replays: line.event_replays.map(replayRecord),
    ...(source === null ? {} : { source: acceptedSource(row, source) }),
  };
}

/** What the schema cannot say of a delivery: only a remapped one belongs to an event, and says when. */
function movedDelivery(line: SourceLine): MovedDelivery {
  const columns = line.source_delivery;
  if (columns.outcome === "ignored" && (columns.event_id !== null || columns.remapped_at !== null)) {
    throw new BadLine("/source_delivery: an ignored delivery has no event_id and no remapped_at");
  }
  if ((columns.event_id === null) !== (columns.remapped_at === null)) {
    throw new BadLine(
      "/source_delivery: event_id and remapped_at are written together, by a remapping: both or neither",
    );
  }
  return toMovedSource({
    ...columns,
    remapped_by: columns.remapped_by ?? null,
    remap_reason: columns.remap_reason ?? null,
  });
}

/** The schema's first complaint, where it is: `/event/status: must be equal to one of the allowed values`. */
function firstError(errors: readonly { instancePath: string; keyword: string; message: string }[]): string {
  const error = errors[0];
  if (error === undefined) return "does not match the format";
  const at = error.instancePath === "" ? "/" : error.instancePath;
  // additionalProperties: false reports each stray key as a failed `false` schema at its own path.
  return error.keyword === "boolean" ? `${at}: not a field of this format` : `${at}: ${error.message}`;
}

function attemptLine(attempt: AttemptRecord): AttemptLine {
  return {
    attempt: attempt.attempt,
    lease_token: attempt.leaseToken,
    worker: attempt.worker,
    started_at: attempt.startedAt,
    finished_at: attempt.finishedAt,
    duration_ms: attempt.durationMs,
    outcome: attempt.outcome,
    http_status: attempt.httpStatus,
    error_class: attempt.errorClass,
    detail: attempt.detail,
    applied: attempt.applied,
    kind: attempt.kind ?? "just_in_time",
  };
}

/** Without `kind` (version 1) the record has none either: the register takes that as just in time (port.ts). */
function attemptRecord(line: ReadAttempt): AttemptRecord {
  return {
    attempt: line.attempt,
    leaseToken: line.lease_token,
    worker: line.worker,
    startedAt: line.started_at,
    finishedAt: line.finished_at,
    durationMs: line.duration_ms,
    outcome: line.outcome,
    httpStatus: line.http_status,
    errorClass: line.error_class,
    detail: line.detail,
    applied: line.applied,
    ...(line.kind === undefined ? {} : { kind: line.kind }),
  };
}

/** The accepted delivery's row as reserve writes it (rows.ts), less what its event's line already holds. */
function acceptedSourceLine(event: EventRecord, source: SourceDeliveryInput): AcceptedSourceLine {
  const row = acceptedSourceRow({ sender: event.sender, eventId: event.eventId, source });
  const { sender: _sender, outcome: _outcome, event_id: _eventId, ...line } = row;
  return line;
}

/** The other way: the line under its event's key, as the delivery the import writes with the event. */
function acceptedSource(row: EventRow, line: AcceptedSourceLine): SourceDeliveryInput {
  const moved = {
    ...line,
    sender: row.sender,
    outcome: "accepted",
    event_id: row.event_id,
    remapped_at: null,
    remapped_by: null,
    remap_reason: null,
  } as const;
  const {
    eventId: _eventId,
    remappedAt: _remappedAt,
    remappedBy: _remappedBy,
    remapReason: _remapReason,
    ...source
  } = toMovedSource(moved);
  return source;
}

function replayLine(replay: ReplayRecord): ReplayLine {
  return {
    requested_by: replay.requestedBy,
    reason: replay.reason,
    forced: replay.forced,
    from_status: replay.fromStatus,
    requested_at: replay.requestedAt,
  };
}

function replayRecord(line: ReplayLine): ReplayRecord {
  return {
    requestedBy: line.requested_by,
    reason: line.reason,
    forced: line.forced,
    fromStatus: line.from_status,
    requestedAt: line.requested_at,
  };
}
