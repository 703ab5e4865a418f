import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { describeLocation } from "../../config/database-url.ts";
import { loadConfig } from "../../config/load-config.ts";
import { ALL_STATUSES, type EventStatus } from "../../domain/event-status.ts";
import { openRegister } from "../../register/open-register.ts";
import type { EventRegister, EventSnapshot } from "../../register/port.ts";
import { noPositionals, parsing } from "../args.ts";
import { type CliContext, CliFailure, type Command, UsageError } from "../context.ts";
import { BadLine, type ExportLine, readHeader, readLine } from "../export-format.ts";
import { table } from "../format.ts";
import { ONEC_URL_NOT_NEEDED } from "../open-register.ts";

/** What an import did, by the status each event had in the export. */
export class ImportTally {
  readonly imported = new Map<EventStatus, number>(ALL_STATUSES.map((status) => [status, 0]));
  readonly present = new Map<EventStatus, number>(ALL_STATUSES.map((status) => [status, 0]));

  add(result: "imported" | "present", status: EventStatus): void {
    const counts = result === "imported" ? this.imported : this.present;
    counts.set(status, (counts.get(status) ?? 0) + 1);
  }

  get events(): number {
    return sum(this.imported) + sum(this.present);
  }

  summary(into: string): string {
    const rows = ALL_STATUSES.map((status) => [
      status,
      String(this.imported.get(status) ?? 0),
      String(this.present.get(status) ?? 0),
    ]);
    return [
      `imported ${sum(this.imported)} events into ${into}; ${sum(this.present)} already present (left as they were)`,
      table(["status", "imported", "already present"], rows),
    ].join("\n");
  }
}

function sum(counts: ReadonlyMap<EventStatus, number>): number {
  return [...counts.values()].reduce((total, count) => total + count, 0);
}

/**
 * Reads an export line by line into the register `connect` opens, once the
 * header has shown the input is an export it can read. Each event is one
 * transaction: stopping at a bad line leaves the events before it imported
 * and nothing of that line. Prints what it did, also when it stops early.
 */
export async function importEvents(
  lines: AsyncIterable<string>,
  connect: () => Promise<{ register: EventRegister; location: string }>,
  io: CliContext,
): Promise<number> {
  const input = lines[Symbol.asyncIterator]();
  const first = await input.next();
  if (first.done === true) throw new CliFailure("the input is empty: expected what `gateway export` writes");
  const { version } = atLine(1, () => readHeader(first.value));
  const { register, location } = await connect();
  const tally = new ImportTally();
  try {
    let number = 1;
    let end: number | undefined;
    for (let next = await input.next(); next.done !== true; next = await input.next()) {
      number += 1;
      if (end !== undefined) throw lineFailure(number, `a line after the end line (line ${end})`);
      const line: ExportLine = atLine(number, () => readLine(next.value, version));
      if (line.type === "end") {
        if (line.events !== tally.events) {
          throw lineFailure(number, `the end line counts ${line.events} events, the input held ${tally.events}`);
        }
        end = number;
        continue;
      }
      tally.add(await importAt(number, register, line.snapshot), line.snapshot.record.status);
    }
    if (end === undefined) {
      throw new CliFailure(
        `the input ended after line ${number} without the export's end line: it was cut short. The events read are imported; export again and import it (they are skipped)`,
      );
    }
    return 0;
  } finally {
    io.out(tally.summary(location));
    await register.close();
  }
}

function atLine<T>(number: number, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof BadLine) throw lineFailure(number, error.message);
    throw error;
  }
}

function lineFailure(number: number, why: string): CliFailure {
  return new CliFailure(`line ${number}: ${why}; nothing of it was imported`);
}

/** A failed write names its line and event; the transaction left nothing of it. */
async function importAt(
  number: number,
  register: EventRegister,
  snapshot: EventSnapshot,
): Promise<"imported" | "present"> {
  try {
    return await register.importEvent(snapshot);
  } catch (error) {
    const { sender, eventId } = snapshot.record;
    const why = error instanceof Error ? error.message : String(error);
    throw lineFailure(number, `event ${eventId} of sender ${sender} could not be written (${why})`);
  }
}

export const importCommand: Command = {
  name: "import",
  synopsis: "import [--in FILE]",
  summary: "read what `export` wrote into the register",
  help: `Usage: gateway import [--in FILE]

Reads what \`gateway export\` wrote (stdin by default) into DATABASE_URL's
register, SQLite or PostgreSQL. The schema is brought up to date first, as at
start; a missing SQLite file is created.

Each event goes in with its attempts and replays in one transaction, exactly
as it was, except its lease: the processes that held leases are stopped, so
pending events are delivered by the gateways and workers on this database as
soon as they are due (fencing tokens carry on from where they were). An event
whose sender and event_id the register already holds is left as it is and
counted as already present: running the same import again is safe.

Prints how many events it imported and how many were already present, by
status. Input that is not an export, of a format version this gateway does not
read, or with a line that breaks the format stops the import at that line,
named by its number: the events before it are imported, nothing of that line
is. An input without its end line (an export cut short) is imported as far as
it goes, then refused the same way. Fix the input and run it again.

Options:
  --in FILE  read FILE instead of stdin

Reads DATABASE_URL; ONEC_URL is not needed. Exits 1 when it stopped early.`,
  async run(argv, context) {
    const { values, positionals } = parsing(() =>
      parseArgs({ args: argv, options: { in: { type: "string" } }, allowPositionals: true }),
    );
    noPositionals(positionals);
    const { database } = loadConfig(context.env, { onecUrl: ONEC_URL_NOT_NEEDED });
    const connect = async () => ({ register: await openRegister(database), location: describeLocation(database) });
    if (values.in === undefined) {
      if (process.stdin.isTTY) throw new UsageError("pipe an export into stdin, or give --in FILE");
      return importEvents(linesOf(process.stdin), connect, context);
    }
    const file = await openInput(values.in);
    try {
      return await importEvents(linesOf(file.createReadStream({ autoClose: false })), connect, context);
    } finally {
      await file.close();
    }
  },
};

async function openInput(path: string) {
  try {
    return await open(path, "r");
  } catch (error) {
    throw new CliFailure(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** LF or CRLF; a last line without its newline still counts. */
function linesOf(input: Readable): AsyncIterable<string> {
  return createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
}
