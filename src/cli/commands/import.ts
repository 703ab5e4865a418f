import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { describeLocation } from "../../config/database-url.ts";
import { loadConfig } from "../../config/load-config.ts";
import { ALL_STATUSES, type EventStatus } from "../../domain/event-status.ts";
import { openRegister } from "../../register/open-register.ts";
import type { EventRegister, EventSnapshot } from "../../register/port.ts";
import type { MovedDelivery, SourceOutcome } from "../../register/source-port.ts";
import { noPositionals, parsing } from "../args.ts";
import { type CliContext, CliFailure, type Command, UsageError } from "../context.ts";
import { BadLine, type ExportLine, readHeader, readLine } from "../export-format.ts";
import { table } from "../format.ts";
import { ONEC_URL_NOT_NEEDED } from "../open-register.ts";

type ImportResult = "imported" | "present";

const SOURCE_OUTCOMES: readonly SourceOutcome[] = ["accepted", "ignored", "unmapped"];

/** What an import did: events by the status each had in the export, platform deliveries by outcome. */
export class ImportTally {
  readonly imported = new Map<EventStatus, number>(ALL_STATUSES.map((status) => [status, 0]));
  readonly present = new Map<EventStatus, number>(ALL_STATUSES.map((status) => [status, 0]));
  readonly sourcesImported = new Map<SourceOutcome, number>(SOURCE_OUTCOMES.map((outcome) => [outcome, 0]));
  readonly sourcesPresent = new Map<SourceOutcome, number>(SOURCE_OUTCOMES.map((outcome) => [outcome, 0]));

  /** An event, and the delivery it was accepted from if it carries one: that one went in or not with it. */
  add(result: ImportResult, snapshot: EventSnapshot): void {
    increment(result === "imported" ? this.imported : this.present, snapshot.record.status);
    if (snapshot.source !== undefined) this.addSource(result, "accepted");
  }

  addSource(result: ImportResult, outcome: SourceOutcome): void {
    increment(result === "imported" ? this.sourcesImported : this.sourcesPresent, outcome);
  }

  get events(): number {
    return sum(this.imported) + sum(this.present);
  }

  /** The deliveries read from lines of their own: what the end line counts. */
  get sourceLines(): number {
    return SOURCE_OUTCOMES.filter((outcome) => outcome !== "accepted").reduce(
      (total, outcome) => total + (this.sourcesImported.get(outcome) ?? 0) + (this.sourcesPresent.get(outcome) ?? 0),
      0,
    );
  }

  summary(into: string): string {
    return [
      `imported ${sum(this.imported)} events into ${into}; ${sum(this.present)} already present (left as they were)`,
      table(["status", "imported", "already present"], countRows(ALL_STATUSES, this.imported, this.present)),
      `imported ${sum(this.sourcesImported)} platform webhook deliveries; ${sum(this.sourcesPresent)} already present (left as they were)`,
      table(
        ["outcome", "imported", "already present"],
        countRows(SOURCE_OUTCOMES, this.sourcesImported, this.sourcesPresent),
      ),
    ].join("\n");
  }
}

function countRows<K extends string>(
  keys: readonly K[],
  imported: ReadonlyMap<K, number>,
  present: ReadonlyMap<K, number>,
): string[][] {
  return keys.map((key) => [key, String(imported.get(key) ?? 0), String(present.get(key) ?? 0)]);
}

function increment<K>(counts: Map<K, number>, key: K): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function sum(counts: ReadonlyMap<unknown, number>): number {
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
      switch (line.type) {
        case "end":
          checkEnd(number, line, tally);
          end = number;
          break;
        case "event":
          tally.add(await importAt(number, register, line.snapshot), line.snapshot);
          break;
        case "source_delivery":
          tally.addSource(await importSourceAt(number, register, line.delivery), line.delivery.outcome);
          break;
      }
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

/** The end line counts what came before it: one that does not was joined to another input, or cut. */
function checkEnd(number: number, line: Extract<ExportLine, { type: "end" }>, tally: ImportTally): void {
  if (line.events !== tally.events) {
    throw lineFailure(number, `the end line counts ${line.events} events, the input held ${tally.events}`);
  }
  if (line.sourceDeliveries !== undefined && line.sourceDeliveries !== tally.sourceLines) {
    throw lineFailure(
      number,
      `the end line counts ${line.sourceDeliveries} platform deliveries, the input held ${tally.sourceLines}`,
    );
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
async function importAt(number: number, register: EventRegister, snapshot: EventSnapshot): Promise<ImportResult> {
  try {
    return await register.importEvent(snapshot);
  } catch (error) {
    const { sender, eventId } = snapshot.record;
    const why = error instanceof Error ? error.message : String(error);
    throw lineFailure(number, `event ${eventId} of sender ${sender} could not be written (${why})`);
  }
}

/** As importAt; a remapped delivery also needs its event, which the export wrote before it. */
async function importSourceAt(number: number, register: EventRegister, delivery: MovedDelivery): Promise<ImportResult> {
  try {
    return await register.sources.importDelivery(delivery);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    const event = delivery.eventId === null ? "" : `; it was remapped to event ${delivery.eventId}, which must be in`;
    throw lineFailure(
      number,
      `the ${delivery.outcome} ${delivery.platform} delivery ${delivery.key} of sender ${delivery.sender} could not be written (${why}${event})`,
    );
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

Each event goes in with its attempts, its replays and the platform webhook
delivery it was accepted from in one transaction, exactly as it was, except
its lease: the processes that held leases are stopped, so
pending events are delivered by the gateways and workers on this database as
soon as they are due (fencing tokens carry on from where they were). An event
whose sender and event_id the register already holds is left as it is and
counted as already present: running the same import again is safe.

Ignored and unmapped platform deliveries go in one by one, each under a new
id, as they were otherwise (times, reason, payload, a remapping). An unmapped
one whose sender, platform and key the register already keeps, or an ignored
one with the same sender, platform, key, time and correlation id, is counted
as already present.

Prints how many events it imported and how many were already present, by
status, and the same of the platform deliveries, by outcome. Input that is not an export, of a format version this gateway does not
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
