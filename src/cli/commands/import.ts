import { open } from "node:fs/promises";
import { parseArgs } from "node:util";
import { describeLocation } from "../../config/database-url.ts";
import { loadConfig } from "../../config/load-config.ts";
import { ALL_STATUSES, type EventStatus } from "../../domain/event-status.ts";
import { fingerprintOf } from "../../domain/fingerprint.ts";
import { openRegister } from "../../register/open-register.ts";
import type { EventRecord, EventRegister, EventSnapshot } from "../../register/port.ts";
import type { MovedDelivery, SourceOutcome } from "../../register/source-port.ts";
import { noPositionals, parsing } from "../args.ts";
import { type CliContext, CliFailure, type Command, UsageError } from "../context.ts";
import { BadLine, type ExportLine, readHeader, readLine } from "../export-format.ts";
import { iso, table } from "../format.ts";
import { ONEC_URL_NOT_NEEDED } from "../open-register.ts";

type ImportResult = "imported" | "present";
/** What became of an event line: a "conflict" is one the target holds under its key with other content. */
type EventResult = ImportResult | "conflict";

const SOURCE_OUTCOMES: readonly SourceOutcome[] = ["accepted", "ignored", "unmapped"];

/** What an import did: events by the status each had in the export, platform deliveries by outcome. */
export class ImportTally {
  readonly imported = new Map<EventStatus, number>(ALL_STATUSES.map((status) => [status, 0]));
  readonly present = new Map<EventStatus, number>(ALL_STATUSES.map((status) => [status, 0]));
  readonly conflicting = new Map<EventStatus, number>(ALL_STATUSES.map((status) => [status, 0]));
  readonly sourcesImported = new Map<SourceOutcome, number>(SOURCE_OUTCOMES.map((outcome) => [outcome, 0]));
  readonly sourcesPresent = new Map<SourceOutcome, number>(SOURCE_OUTCOMES.map((outcome) => [outcome, 0]));

  /**
   * An event, and the delivery it was accepted from if it carries one: that one went in or not with it.
   * A conflicting event's delivery is counted nowhere: it was not written, and the target holds another's.
   */
  add(result: EventResult, snapshot: EventSnapshot): void {
    const counts = { imported: this.imported, present: this.present, conflict: this.conflicting }[result];
    increment(counts, snapshot.record.status);
    if (snapshot.source !== undefined && result !== "conflict") this.addSource(result, "accepted");
  }

  addSource(result: ImportResult, outcome: SourceOutcome): void {
    increment(result === "imported" ? this.sourcesImported : this.sourcesPresent, outcome);
  }

  get events(): number {
    return sum(this.imported) + sum(this.present) + sum(this.conflicting);
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
      `imported ${sum(this.imported)} events into ${into}; ${sum(this.present)} already present (left as they were); ${sum(this.conflicting)} conflicting (other content, left as they were)`,
      table(
        ["status", "imported", "already present", "conflicting"],
        countRows(ALL_STATUSES, this.imported, this.present, this.conflicting),
      ),
      `imported ${sum(this.sourcesImported)} platform webhook deliveries; ${sum(this.sourcesPresent)} already present (left as they were)`,
      table(
        ["outcome", "imported", "already present"],
        countRows(SOURCE_OUTCOMES, this.sourcesImported, this.sourcesPresent),
      ),
    ].join("\n");
  }
}

function countRows<K extends string>(keys: readonly K[], ...columns: ReadonlyMap<K, number>[]): string[][] {
  return keys.map((key) => [key, ...columns.map((counts) => String(counts.get(key) ?? 0))]);
}

function increment<K>(counts: Map<K, number>, key: K): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function sum(counts: ReadonlyMap<unknown, number>): number {
  return [...counts.values()].reduce((total, count) => total + count, 0);
}

export interface ImportOptions {
  /** Import an event whose lease has not run out too (without its lease), instead of refusing it. */
  ignoreLeases: boolean;
}

/**
 * Reads an export line by line into the register `connect` opens, once the
 * header has shown the input is an export it can read. Each event is one
 * transaction: stopping at a bad line leaves the events before it imported
 * and nothing of that line. An event whose lease has not run out stops it the
 * same way, unless `ignoreLeases`. An event the target holds with other
 * content is printed and left; the import goes on and fails at the end. Prints
 * what it did, also when it stops early.
 */
export async function importEvents(
  lines: AsyncIterable<string>,
  connect: () => Promise<{ register: EventRegister; location: string }>,
  io: CliContext,
  options: ImportOptions = { ignoreLeases: false },
): Promise<number> {
  const input = lines[Symbol.asyncIterator]();
  const first = await nextLine(1, input);
  if (first.done === true) throw new CliFailure("the input is empty: expected what `gateway export` writes");
  const { version } = atLine(1, () => readHeader(first.value));
  const { register, location } = await connect();
  const target: Target = { register, location, io, ignoreLeases: options.ignoreLeases };
  const tally = new ImportTally();
  try {
    let number = 1;
    let end: number | undefined;
    for (let next = await nextLine(2, input); next.done !== true; next = await nextLine(number + 1, input)) {
      number += 1;
      if (end !== undefined) throw lineFailure(number, `a line after the end line (line ${end})`);
      const line: ExportLine = atLine(number, () => readLine(next.value, version));
      switch (line.type) {
        case "end":
          checkEnd(number, line, tally);
          end = number;
          break;
        case "event":
          tally.add(await importAt(number, target, line.snapshot), line.snapshot);
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
    const conflicts = sum(tally.conflicting);
    if (conflicts > 0) {
      throw new CliFailure(
        `${conflicts} ${conflicts === 1 ? "event" : "events"} conflicted with what ${location} holds (listed above): left as ${conflicts === 1 ? "it was" : "they were"} there; every other line was imported or already present`,
      );
    }
    return 0;
  } finally {
    io.out(tally.summary(location));
    await register.close();
  }
}

/** Where the events go, and how. */
interface Target {
  register: EventRegister;
  location: string;
  io: CliContext;
  ignoreLeases: boolean;
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

/** The next line, which is line `number`: one the input cannot give (too long) is a bad line. */
async function nextLine(number: number, input: AsyncIterator<string>): Promise<IteratorResult<string>> {
  try {
    return await input.next();
  } catch (error) {
    if (error instanceof BadLine) throw lineFailure(number, error.message);
    throw error;
  }
}

function lineFailure(number: number, why: string): CliFailure {
  return new CliFailure(`line ${number}: ${why}; nothing of it was imported`);
}

/**
 * One event line. One the target already holds is compared with it: other
 * content under the same key is a conflict, printed, never written. One it
 * does not hold yet is refused while its lease runs (a process on the source
 * register may be delivering it: imported without it, it could be claimed at
 * once here too), unless leases are ignored. A failed write names its line and
 * event; the transaction left nothing of it.
 */
async function importAt(number: number, target: Target, snapshot: EventSnapshot): Promise<EventResult> {
  const { register } = target;
  const { sender, eventId } = snapshot.record;
  const held = await register.find(sender, eventId);
  if (held !== undefined) return compared(number, target, snapshot.record, held);
  if (!target.ignoreLeases) refuseLive(number, snapshot.record, target.io.now());
  let result: ImportResult;
  try {
    result = await register.importEvent(snapshot);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw lineFailure(number, `event ${eventId} of sender ${sender} could not be written (${why})`);
  }
  if (result === "imported") return result;
  // Written by another process since the look above: compare with what it wrote.
  const written = await register.find(sender, eventId);
  return written === undefined ? result : compared(number, target, snapshot.record, written);
}

function refuseLive(number: number, record: EventRecord, now: number): void {
  if (record.leaseUntil === null || record.leaseUntil <= now) return;
  const until = iso(record.leaseUntil);
  throw lineFailure(
    number,
    `event ${record.eventId} of sender ${record.sender} is leased by ${record.leaseOwner ?? "?"} until ${until}: ` +
      "a gateway or worker on the source register may still be delivering it, and 1C would get it twice; " +
      `stop the gateways that use the source register first, or wait until ${until} ` +
      "(then export again, or import with --ignore-leases)",
  );
}

/** "present" when the target holds the same event, as the gateway tells a sender's repeat from a change. */
function compared(number: number, target: Target, line: EventRecord, held: EventRecord): EventResult {
  if (sameEvent(line, held)) return "present";
  target.io.err(
    `gateway import: line ${number}: event ${line.eventId} of sender ${line.sender} is already in ${target.location} with other content (fingerprint ${held.fingerprint} there, ${line.fingerprint} in the input): left as it was`,
  );
  return "conflict";
}

/**
 * Under one fingerprint policy, the same fingerprint; under two, the same body
 * (the canonical text), or the line's body hashed under the held event's
 * policy: as the acceptor compares a repeat with the row it holds.
 */
function sameEvent(line: EventRecord, held: EventRecord): boolean {
  if (line.policyVersion === held.policyVersion) return line.fingerprint === held.fingerprint;
  return line.body === held.body || fingerprintOf(line.body, held.policyVersion) === held.fingerprint;
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

/**
 * The longest line import reads. An event line holds at most its body and
 * its platform delivery's payload, each at most 16 MiB (the ceiling of
 * BODY_LIMIT and of WEBHOOK_BODY_LIMIT), each at most doubled by JSON's
 * escapes (a quote or a backslash takes two bytes): 64 MiB. Twice that leaves
 * room for the rest of the line and for rarer escapes, far below the longest
 * string V8 makes (about 512 M characters), whose RangeError a longer line
 * would otherwise end in.
 */
export const MAX_LINE_MIB = 128;
const MAX_LINE_BYTES = MAX_LINE_MIB * 1024 * 1024;
const LF = 0x0a;

export const importCommand: Command = {
  name: "import",
  synopsis: "import [--in FILE] [--ignore-leases]",
  summary: "read what `export` wrote into the register",
  help: `Usage: gateway import [--in FILE] [--ignore-leases]

Reads what \`gateway export\` wrote (stdin by default) into DATABASE_URL's
register, SQLite or PostgreSQL. The schema is brought up to date first, as at
start; a missing SQLite file is created. A line ends at a line feed (LF or
CRLF) and is at most ${MAX_LINE_MIB} MiB.

Each event goes in with its attempts, its replays and the platform webhook
delivery it was accepted from in one transaction, exactly as it was, except
its lease, so pending events are delivered by the gateways and workers on
this database as soon as they are due (fencing tokens carry on from where
they were). An event whose lease has not run out yet may still be in the
hands of a gateway or worker on the source register: the import stops at its
line (see below), naming it and until when, unless --ignore-leases is given.
An event whose sender and event_id the register already holds is left as it
is: counted as already present if it is the same event (the same fingerprint),
as conflicting otherwise, each conflict printed on stderr. Running the same
import again is safe.

Ignored and unmapped platform deliveries go in one by one, each under a new
id, as they were otherwise (times, reason, payload, a remapping). An unmapped
one whose sender, platform and key the register already keeps, or an ignored
one with the same sender, platform, key, time and correlation id, is counted
as already present.

Prints how many events it imported, how many were already present and how
many conflicted, by status, and the platform deliveries imported and already
present, by outcome. Input that is not an export, of a format version this
gateway does not read, with a line that breaks the format or is too long, or
with an event still leased stops the import at that line, named by its
number: the events before it are imported, nothing of that line is. An input
without its end line (an export cut short) is imported as far as it goes,
then refused the same way. Fix the input (or stop the source's gateways) and
run it again.

Options:
  --in FILE          read FILE instead of stdin
  --ignore-leases    import events whose lease has not run out too, without
                     it: only once every gateway and worker on the source
                     register is stopped

Reads DATABASE_URL; ONEC_URL is not needed. Exits 1 when it stopped early or
an event conflicted (after importing every other line).`,
  async run(argv, context) {
    const { values, positionals } = parsing(() =>
      parseArgs({
        args: argv,
        options: { in: { type: "string" }, "ignore-leases": { type: "boolean", default: false } },
        allowPositionals: true,
      }),
    );
    noPositionals(positionals);
    const { database } = loadConfig(context.env, { onecUrl: ONEC_URL_NOT_NEEDED });
    const connect = async () => ({ register: await openRegister(database), location: describeLocation(database) });
    const options: ImportOptions = { ignoreLeases: values["ignore-leases"] };
    if (values.in === undefined) {
      if (process.stdin.isTTY) throw new UsageError("pipe an export into stdin, or give --in FILE");
      return importEvents(linesOf(process.stdin), connect, context, options);
    }
    const file = await openInput(values.in);
    try {
      return await importEvents(linesOf(file.createReadStream({ autoClose: false })), connect, context, options);
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

/**
 * The input's lines, ending at a line feed only, a carriage return before it
 * dropped (CRLF); a last line without its newline still counts. Never at
 * U+2028 or U+2029, as readline would: JSON.stringify writes both raw inside
 * strings, so an event holding one (an address typed with a line separator)
 * is one line. A line over MAX_LINE_BYTES is a BadLine, read no further.
 */
export async function* linesOf(input: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  let parts: Buffer[] = [];
  let length = 0;
  const take = (piece: Buffer) => {
    length += piece.length;
    if (length > MAX_LINE_BYTES) {
      throw new BadLine(
        `longer than ${MAX_LINE_MIB} MiB, the longest line import reads: not a line \`gateway export\` writes`,
      );
    }
    if (piece.length > 0) parts.push(piece);
  };
  const line = () => {
    const bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, length);
    parts = [];
    length = 0;
    const text = bytes.toString("utf8");
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  };
  for await (const chunk of input) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    let start = 0;
    for (let end = bytes.indexOf(LF); end !== -1; end = bytes.indexOf(LF, start)) {
      take(bytes.subarray(start, end));
      yield line();
      start = end + 1;
    }
    take(bytes.subarray(start));
  }
  if (length > 0) yield line();
}
