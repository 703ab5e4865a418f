import type { EventRegister } from "../../register/port.ts";
import type { CliContext } from "../context.ts";
import { oneLine } from "../format.ts";
import { type EventSelection, selectEvents } from "./list.ts";
import { type ReplayRequestOptions, replayOne } from "./replay-event.ts";

export interface BulkReplayOptions extends ReplayRequestOptions, EventSelection {
  /** Replays per second: the pause between two replays is 1000 / rate ms. */
  rate: number;
  dryRun: boolean;
}

/**
 * Replays the events `list` would show, one by one, throttled to `rate` per
 * second so the gateway does not send 1C a burst. Each replay is its own
 * transaction: stopping half way (Ctrl-C) leaves the rest untouched.
 * An event is replayed only if it still has the status it was chosen by: one
 * delivered meanwhile is left as it is (with --force it would go to 1C again).
 * 0 when every event was replayed or had changed, 1 when some were refused.
 */
export async function replayBulk(options: BulkReplayOptions, register: EventRegister, io: CliContext): Promise<number> {
  const records = await selectEvents(register, options);
  if (records.length === options.limit) {
    io.err(`taking the first ${options.limit} matching events; run again (or raise --limit) for the rest`);
  }
  if (records.length === 0) {
    io.out(`no ${options.status} events to replay`);
    return 0;
  }
  if (options.dryRun) {
    for (const r of records) {
      const attempts = `${r.attempts} attempt${r.attempts === 1 ? "" : "s"}`;
      io.out(`${r.eventId}: would replay ${r.status} (${attempts}, last error: ${oneLine(r.lastError, 60)})`);
    }
    io.out(`dry run: would replay ${records.length}, nothing changed`);
    return 0;
  }
  const pauseMs = 1000 / options.rate;
  let replayed = 0;
  let refused = 0;
  let changed = 0;
  for (const [index, record] of records.entries()) {
    if (index > 0) await io.sleep(pauseMs);
    // Chosen by its status maybe minutes ago (--rate): replayed only if it still has it, in the replay's transaction.
    const request = { ...options, expectedStatus: record.status };
    const outcome = await replayOne(register, record.eventId, request, io.now(), record.sender);
    io.out(outcome.line);
    if (outcome.replayed) replayed += 1;
    else if (outcome.changed === true) changed += 1;
    else refused += 1;
  }
  const moved = changed === 0 ? "" : `, ${changed} no longer ${options.status}`;
  io.out(`replayed ${replayed}, refused ${refused}${moved}`);
  return refused === 0 ? 0 : 1;
}
