import { createWriteStream } from "node:fs";
import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { describeLocation } from "../../config/database-url.ts";
import { loadConfig } from "../../config/load-config.ts";
import { ALL_STATUSES, type EventStatus } from "../../domain/event-status.ts";
import type { EventRecord, EventRegister, PageCursor } from "../../register/port.ts";
import { noPositionals, parsing } from "../args.ts";
import { CliFailure, type Command } from "../context.ts";
import { type ExportHeader, endText, eventText, headerText } from "../export-format.ts";
import { iso } from "../format.ts";
import { ONEC_URL_NOT_NEEDED, withRegister } from "../open-register.ts";

/** Events per read: memory holds one page, whatever the register's size. */
export const EXPORT_PAGE_SIZE = 500;

/** What an export wrote, for the operator's summary. */
export class ExportTally {
  events = 0;
  readonly byStatus = new Map<EventStatus, number>(ALL_STATUSES.map((status) => [status, 0]));
  /** Events whose lease had not expired: a process may still be working on the register. */
  leased = 0;

  count(record: EventRecord, now: number): void {
    this.events += 1;
    this.byStatus.set(record.status, (this.byStatus.get(record.status) ?? 0) + 1);
    if (record.leaseUntil !== null && record.leaseUntil > now) this.leased += 1;
  }
}

/**
 * The export, line by line: the header, every event newest first (keyset
 * pages, each event with its attempts and replays), the end line. A
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
      const [attempts, replays] = await Promise.all([
        register.listAttempts(record.sender, record.eventId),
        register.listReplays(record.sender, record.eventId),
      ]);
      tally.count(record, now);
      yield `${eventText({ record, attempts, replays })}\n`;
    }
    const last = page.at(-1);
    if (last === undefined || page.length < EXPORT_PAGE_SIZE) break;
    before = { receivedAt: last.receivedAt, sender: last.sender, eventId: last.eventId };
  }
  yield `${endText(tally.events)}\n`;
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
  const lines = [`exported ${tally.events} events from ${from}: ${statuses}`];
  if (tally.leased > 0) {
    lines.push(
      `warning: ${tally.leased} of them held a lease not yet run out: if a gateway or worker still runs on ${from}, stop every one and export again`,
    );
  }
  return lines;
}

export const exportCommand: Command = {
  name: "export",
  synopsis: "export [--out FILE]",
  summary: "write every event of the register as NDJSON (to move it)",
  help: `Usage: gateway export [--out FILE]

Writes every event of DATABASE_URL's register (SQLite or PostgreSQL) as
NDJSON: a header line with the format version, one line per event with every
column of its row, its delivery attempts and its replays, and an end line.
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

What was exported, by status, goes to stderr: stdout carries only the export.

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
