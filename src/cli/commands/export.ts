import { createWriteStream } from "node:fs";
import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { describeLocation } from "../../config/database-url.ts";
import { loadConfig } from "../../config/load-config.ts";
import { ALL_STATUSES, type EventStatus } from "../../domain/event-status.ts";
import type { EventRecord, EventRegister, PageCursor } from "../../register/port.ts";
import type { SourceDeliveryLog, SourceOutcome } from "../../register/source-port.ts";
import { noPositionals, parsing } from "../args.ts";
import { CliFailure, type Command } from "../context.ts";
import { type ExportHeader, endText, eventText, headerText, sourceText } from "../export-format.ts";
import { iso } from "../format.ts";
import { ONEC_URL_NOT_NEEDED, withRegister } from "../open-register.ts";

/** Events per read: memory holds one page, whatever the register's size. */
export const EXPORT_PAGE_SIZE = 500;

/** Deliveries per read, as events: a payload is at most a webhook's body. */
export const EXPORT_SOURCE_PAGE_SIZE = 500;

const SOURCE_OUTCOMES: readonly SourceOutcome[] = ["accepted", "ignored", "unmapped"];

/** What an export wrote, for the operator's summary. */
export class ExportTally {
  events = 0;
  readonly byStatus = new Map<EventStatus, number>(ALL_STATUSES.map((status) => [status, 0]));
  /** Events whose lease had not expired: a process may still be working on the register. */
  leased = 0;
  /** The platforms' deliveries: the accepted ones inside their events' lines, the others on their own. */
  readonly sources = new Map<SourceOutcome, number>(SOURCE_OUTCOMES.map((outcome) => [outcome, 0]));

  count(record: EventRecord, now: number): void {
    this.events += 1;
    this.byStatus.set(record.status, (this.byStatus.get(record.status) ?? 0) + 1);
    if (record.leaseUntil !== null && record.leaseUntil > now) this.leased += 1;
  }

  countSource(outcome: SourceOutcome): void {
    this.sources.set(outcome, (this.sources.get(outcome) ?? 0) + 1);
  }

  /** The deliveries on lines of their own: what the end line counts. */
  get sourceLines(): number {
    return (this.sources.get("ignored") ?? 0) + (this.sources.get("unmapped") ?? 0);
  }
}

/**
 * The export, line by line: the header, every event newest first (keyset
 * pages, each event with its attempts, replays and accepted platform
 * delivery), the ignored and unmapped deliveries oldest first (after the
 * events: a remapped one's event is then imported already), the end line. A
 * generator, so the writer's backpressure paces the reads.
 */
export async function* exportLines(
  register: EventRegister,
  header: ExportHeader,
  tally: ExportTally,
  now: number,
): AsyncGenerator<string> {
  yield `${headerText(header)}\n`;
  let before: PageCursor | undefined;
  for (;;) {
    const page = await register.page({ limit: EXPORT_PAGE_SIZE, ...(before === undefined ? {} : { before }) });
    for (const record of page) {
      const [attempts, replays, delivery] = await Promise.all([
        register.listAttempts(record.sender, record.eventId),
        register.listReplays(record.sender, record.eventId),
        register.sources.ofEvent(record.sender, record.eventId),
      ]);
      tally.count(record, now);
      // ofEvent may answer with an unmapped delivery remapped to the event: that one has its own line.
      const source = delivery?.outcome === "accepted" ? delivery : undefined;
      if (source !== undefined) tally.countSource("accepted");
      yield `${eventText({ record, attempts, replays, ...(source === undefined ? {} : { source }) })}\n`;
    }
    const last = page.at(-1);
    if (last === undefined || page.length < EXPORT_PAGE_SIZE) break;
    before = { receivedAt: last.receivedAt, sender: last.sender, eventId: last.eventId };
  }
  yield* sourceLines(register.sources, tally);
  yield `${endText({ events: tally.events, sourceDeliveries: tally.sourceLines })}\n`;
}

async function* sourceLines(sources: SourceDeliveryLog, tally: ExportTally): AsyncGenerator<string> {
  let afterId = 0;
  for (;;) {
    const page = await sources.exportPage({ afterId, limit: EXPORT_SOURCE_PAGE_SIZE });
    for (const { id: _id, ...delivery } of page) {
      tally.countSource(delivery.outcome);
      yield `${sourceText(delivery)}\n`;
    }
    const last = page.at(-1);
    if (last === undefined || page.length < EXPORT_SOURCE_PAGE_SIZE) return;
    afterId = last.id;
  }
}

/** Writes the whole export to `output`; stdout is left open (`end: false`), a file is closed. */
export async function exportEvents(
  register: EventRegister,
  output: Writable,
  header: ExportHeader,
  now: number,
  end: boolean,
): Promise<ExportTally> {
  const tally = new ExportTally();
  await pipeline(Readable.from(exportLines(register, header, tally, now)), output, { end });
  return tally;
}

export function exportSummary(tally: ExportTally, from: string): string[] {
  const statuses = ALL_STATUSES.map((status) => `${status} ${tally.byStatus.get(status) ?? 0}`).join(", ");
  const outcomes = SOURCE_OUTCOMES.map((outcome) => `${outcome} ${tally.sources.get(outcome) ?? 0}`).join(", ");
  const sources = sum(tally.sources);
  const lines = [
    `exported ${tally.events} events from ${from}: ${statuses}`,
    `exported ${sources} platform webhook deliveries: ${outcomes}`,
  ];
  if (tally.leased > 0) {
    lines.push(
      `warning: ${tally.leased} of them held a lease not yet run out: if a gateway or worker still runs on ${from}, stop every one and export again`,
    );
  }
  return lines;
}

function sum(counts: ReadonlyMap<unknown, number>): number {
  return [...counts.values()].reduce((total, count) => total + count, 0);
}

export const exportCommand: Command = {
  name: "export",
  synopsis: "export [--out FILE]",
  summary: "write every event of the register as NDJSON (to move it)",
  help: `Usage: gateway export [--out FILE]

Writes every event of DATABASE_URL's register (SQLite or PostgreSQL) as
NDJSON: a header line with the format version, one line per event with every
column of its row, its delivery attempts, its replays and the platform webhook
delivery it was accepted from, one line per ignored or unmapped platform
delivery (an unmapped one is the only record of a paid order until support
maps it again), and an end line.
\`gateway import\` reads it into another database:

  DATABASE_URL=data/gateway.db npx gateway export \\
    | DATABASE_URL=postgres://user:password@host:5432/db npx gateway import

The register holds only events within retention (older ones are purged), so
this is every event the gateway still remembers: the finished ones, whose
resends it answers with their first answer, and the pending ones.

Stop every gateway and worker on the register first: changes made while the
export runs may be missed. Events still leased are counted in a warning.

Options:
  --out FILE  write to FILE (replaced if it exists) instead of stdout

What was exported, events by status and platform deliveries by outcome, goes
to stderr: stdout carries only the export.

Reads DATABASE_URL; ONEC_URL is not needed.`,
  async run(argv, context) {
    const { values, positionals } = parsing(() =>
      parseArgs({ args: argv, options: { out: { type: "string" } }, allowPositionals: true }),
    );
    noPositionals(positionals);
    const { database } = loadConfig(context.env, { onecUrl: ONEC_URL_NOT_NEEDED });
    const from = describeLocation(database);
    const header = { exportedAt: iso(context.now()), exportedFrom: from };
    const tally = await withRegister(context.env, (register) =>
      values.out === undefined
        ? exportEvents(register, process.stdout, header, context.now(), false)
        : toFile(values.out, (file) => exportEvents(register, file, header, context.now(), true)),
    );
    for (const line of exportSummary(tally, from)) context.err(line);
    return 0;
  },
};

/** A file that cannot be written is the operator's to fix (one line, exit 1); a register failure stays what it is. */
async function toFile<T>(path: string, write: (file: Writable) => Promise<T>): Promise<T> {
  const file = createWriteStream(path);
  try {
    return await write(file);
  } catch (error) {
    if (isFileError(error)) throw new CliFailure(`cannot write ${path}: ${error.message}`);
    throw error;
  } finally {
    file.destroy();
  }
}

function isFileError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === "string";
}
