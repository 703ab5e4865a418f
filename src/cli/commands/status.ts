import { parseArgs } from "node:util";
import { lookUpEvent } from "../../operations/look-up-event.ts";
import type { EventRegister } from "../../register/port.ts";
import { attemptView, statusView } from "../../views/event-views.ts";
import { onePositional, parsing, senderOption } from "../args.ts";
import type { CliContext, Command } from "../context.ts";
import { cell, oneLine, table } from "../format.ts";
import { withRegister } from "../open-register.ts";

export interface StatusOptions {
  eventId: string;
  /** Whose event, when several senders used the id. */
  sender: string | undefined;
  json: boolean;
}

/** Prints an event's state and its attempt history; 1 when there is no such event. */
export async function showStatus(options: StatusOptions, register: EventRegister, io: CliContext): Promise<number> {
  const lookup = await lookUpEvent(register, options.eventId, options.sender);
  if (lookup.kind === "missing") {
    io.err(`no event with event_id "${options.eventId}"`);
    return 1;
  }
  if (lookup.kind === "ambiguous") {
    io.err(`senders ${lookup.senders.join(", ")} each sent "${options.eventId}"; add --sender <one of them>`);
    return 1;
  }
  const { record } = lookup;
  const attempts = (await register.listAttempts(record.sender, record.eventId)).map(attemptView);
  const view = { sender: record.sender, ...statusView(record) };
  if (options.json) {
    io.out(JSON.stringify({ ...view, attempt_history: attempts }, null, 2));
    return 0;
  }
  const width = Math.max(...Object.keys(view).map((key) => key.length));
  io.out(
    Object.entries(view)
      .map(([key, value]) => `${key.padEnd(width)}  ${cell(value)}`)
      .join("\n"),
  );
  io.out("");
  if (attempts.length === 0) {
    io.out("no delivery attempts yet");
    return 0;
  }
  io.out(
    table(
      ["attempt", "started_at", "duration", "outcome", "http_status", "error_class", "detail"],
      attempts.map((a) => [
        cell(a.attempt),
        cell(a.started_at),
        a.duration_ms === null ? "-" : `${cell(a.duration_ms)} ms`,
        cell(a.outcome),
        cell(a.http_status),
        cell(a.error_class),
        oneLine(typeof a.detail === "string" ? a.detail : null, 80),
      ]),
    ),
  );
  return 0;
}

export const statusCommand: Command = {
  name: "status",
  synopsis: "status <event_id> [--sender ID] [--json]",
  summary: "an event's state and its delivery attempts",
  help: `Usage: gateway status <event_id> [--sender ID] [--json]

Prints the event's state (the same fields as its HTTP status URL) and its
delivery attempts: attempt, started_at, duration, outcome, http_status,
error_class, detail. Exits 1 when no event has that event_id.

Options:
  --sender ID  whose event, when several senders used the id
  --json       one JSON document: the status view plus "attempt_history"

Reads DATABASE_URL; ONEC_URL is not needed.`,
  async run(argv, context) {
    const { values, positionals } = parsing(() =>
      parseArgs({
        args: argv,
        options: { json: { type: "boolean", default: false }, sender: { type: "string" } },
        allowPositionals: true,
      }),
    );
    const options = {
      eventId: onePositional(positionals, "event_id"),
      sender: senderOption(values.sender),
      json: values.json,
    };
    return withRegister(context.env, (register) => showStatus(options, register, context));
  },
};
