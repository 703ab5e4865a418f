import { parseArgs } from "node:util";
import type { EventStatus } from "../../domain/event-status.ts";
import type { EventRecord, EventRegister } from "../../register/port.ts";
import { statusView } from "../../views/event-views.ts";
import { integerOption, noPositionals, parsing, senderOption, statusOption, timeOption } from "../args.ts";
import type { CliContext, Command } from "../context.ts";
import { iso, oneLine, table } from "../format.ts";
import { withRegister } from "../open-register.ts";

/** Which events `list` and bulk `replay` work on: one status, oldest received first. */
export interface EventSelection {
  status: EventStatus;
  /** Only this sender's events; absent: every sender's. */
  sender: string | undefined;
  /** received_at bounds, inclusive, epoch ms. */
  since: number | undefined;
  until: number | undefined;
  limit: number;
}

export interface ListOptions extends EventSelection {
  json: boolean;
}

export function selectEvents(register: EventRegister, selection: EventSelection): Promise<EventRecord[]> {
  const { status, sender, since, until, limit } = selection;
  return register.list({ status, sender, since, until, limit });
}

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 10_000;

/** One line per event in `status`, oldest received first. */
export async function listEvents(options: ListOptions, register: EventRegister, io: CliContext): Promise<number> {
  const records = await selectEvents(register, options);
  if (options.json) {
    io.out(
      JSON.stringify(
        records.map((r) => ({ sender: r.sender, ...statusView(r) })),
        null,
        2,
      ),
    );
  } else if (records.length === 0) {
    io.out(`no ${options.status} events`);
  } else {
    io.out(
      table(
        ["sender", "event_id", "status", "attempts", "updated_at", "last_error"],
        records.map((r) => [
          r.sender,
          r.eventId,
          r.status,
          String(r.attempts),
          iso(r.updatedAt),
          oneLine(r.lastError, 60),
        ]),
      ),
    );
  }
  if (records.length === options.limit) {
    io.err(`showing the first ${options.limit}; more may match: narrow --since/--until or raise --limit`);
  }
  return 0;
}

export const listCommand: Command = {
  name: "list",
  synopsis: "list --status <STATUS> [...]",
  summary: "events in one status",
  help: `Usage: gateway list --status <STATUS> [--since ISO] [--until ISO] [--limit N] [--json]

One line per event, oldest received first: sender, event_id, status, attempts,
updated_at, last error (truncated).

Options:
  --status STATUS   PROCESSING, SUCCEEDED, FAILED_RETRYABLE or FAILED_FINAL (required)
  --sender ID       only this sender's events (default: every sender's)
  --since ISO       received at or after, e.g. 2026-11-30T10:00:00Z; a time
                    without a zone is UTC (2026-11-30T10:00), as is a date
  --until ISO       received at or before
  --limit N         at most N events (default ${DEFAULT_LIMIT}, up to ${MAX_LIMIT})
  --json            a JSON array of status views (the HTTP status URL's fields)

Reads DATABASE_URL; ONEC_URL is not needed.`,
  async run(argv, context) {
    const { values, positionals } = parsing(() =>
      parseArgs({
        args: argv,
        options: {
          status: { type: "string" },
          sender: { type: "string" },
          since: { type: "string" },
          until: { type: "string" },
          limit: { type: "string" },
          json: { type: "boolean", default: false },
        },
        allowPositionals: true,
      }),
    );
    noPositionals(positionals);
    const options: ListOptions = {
      status: statusOption(values.status),
      sender: senderOption(values.sender),
      since: timeOption("since", values.since),
      until: timeOption("until", values.until),
      limit: integerOption("limit", values.limit, DEFAULT_LIMIT, 1, MAX_LIMIT),
      json: values.json,
    };
    return withRegister(context.env, (register) => listEvents(options, register, context));
  },
};
