import { parseArgs } from "node:util";
import { EventStatus } from "../../domain/event-status.ts";
import {
  integerOption,
  onePositional,
  parsing,
  rateOption,
  reasonOption,
  requestedByOption,
  senderOption,
  statusOption,
  timeOption,
} from "../args.ts";
import { type CliContext, type Command, UsageError } from "../context.ts";
import { withRegister } from "../open-register.ts";
import { DEFAULT_LIMIT, MAX_LIMIT } from "./list.ts";
import { type BulkReplayOptions, replayBulk } from "./replay-bulk.ts";
import { type ReplayEventOptions, replayOneCommand } from "./replay-event.ts";
import { replaySigner, TOKEN_VARIABLE } from "./replay-identity.ts";

const DEFAULT_RATE = 5;
const BULK_ONLY = ["since", "until", "limit", "rate", "dry-run"] as const;

const OPTIONS = {
  reason: { type: "string" },
  by: { type: "string" },
  "token-file": { type: "string" },
  sender: { type: "string" },
  force: { type: "boolean", default: false },
  status: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  limit: { type: "string" },
  rate: { type: "string" },
  "dry-run": { type: "boolean", default: false },
} as const;

export const replayCommand: Command = {
  name: "replay",
  synopsis: 'replay <event_id> --reason "…"',
  summary: "send an event to 1C again (--status …: in bulk, throttled)",
  help: `Usage: gateway replay <event_id> --reason "…" [--force] [--token-file FILE | --by NAME]
       gateway replay --status <STATUS> --reason "…" [--since ISO] [--until ISO]
                      [--limit N] [--rate N] [--force] [--token-file FILE | --by NAME] [--dry-run]

Puts events back to PROCESSING with a fresh attempt budget and records who
asked and why (table event_replays). A running gateway or \`gateway worker\`
delivers them at its next poll (DELIVERY_POLL_MS, default 1 s).

Who asks: when OPERATORS_FILE is set, your own token from it, in ${TOKEN_VARIABLE}
or in the file --token-file names; the replay is recorded under your name
there, and a viewer's token is refused (exit 1). Without OPERATORS_FILE:
--by NAME, or user@host. A --dry-run needs no token.

Options:
  --reason TEXT     why, for the audit trail (required, up to 500 characters)
  --token-file FILE a file holding your token (instead of ${TOKEN_VARIABLE})
  --by NAME         who asks, without OPERATORS_FILE (default: user@host)
  --sender ID       whose event, when several senders used the id (bulk: only this sender's)
  --force           replay SUCCEEDED events too: the same bytes go to 1C again,
                    and 1C answers with the order it already has
Bulk (--status instead of an event_id):
  --status STATUS   replay the events in this status, oldest received first
  --since ISO       received at or after, e.g. 2026-11-30T10:00:00Z; a time
                    without a zone is UTC (2026-11-30T10:00), as is a date
  --until ISO       received at or before
  --limit N         at most N events (default ${DEFAULT_LIMIT}, up to ${MAX_LIMIT})
  --rate N          replays per second (default ${DEFAULT_RATE})
  --dry-run         print what would be replayed, change nothing

Exits 0 when everything asked for was replayed, 1 when an event is unknown or
a replay was refused (already SUCCEEDED without --force, or an attempt running).

Reads DATABASE_URL; ONEC_URL is not needed.`,
  async run(argv, context) {
    const parsed = parsing(() => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true }));
    if (parsed.values.status === undefined) {
      const options = oneEventOptions(parsed, context.env);
      return withRegister(context.env, (register) => replayOneCommand(options, register, context));
    }
    const options = bulkOptions(parsed, context.env);
    return withRegister(context.env, (register) => replayBulk(options, register, context));
  },
};

type Parsed = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;

function identity(values: Parsed["values"]) {
  return { by: values.by, tokenFile: values["token-file"] };
}

function oneEventOptions({ values, positionals }: Parsed, env: CliContext["env"]): ReplayEventOptions {
  if (positionals.length === 0) throw new UsageError("give an <event_id>, or --status STATUS for bulk replay");
  const bulkFlag = BULK_ONLY.find((flag) => values[flag] !== undefined && values[flag] !== false);
  if (bulkFlag !== undefined) throw new UsageError(`--${bulkFlag} applies to bulk replay (--status) only`);
  return {
    eventId: onePositional(positionals, "event_id"),
    sender: senderOption(values.sender),
    reason: reasonOption(values.reason),
    requestedBy: replaySigner(identity(values), "events.replay", env),
    force: values.force,
  };
}

function bulkOptions({ values, positionals }: Parsed, env: CliContext["env"]): BulkReplayOptions {
  if (positionals.length > 0) throw new UsageError("give either an <event_id> or --status, not both");
  const status = statusOption(values.status);
  if (status === EventStatus.SUCCEEDED && !values.force) {
    throw new UsageError("replaying SUCCEEDED events sends them to 1C again: add --force if that is what you want");
  }
  return {
    status,
    sender: senderOption(values.sender),
    since: timeOption("since", values.since),
    until: timeOption("until", values.until),
    limit: integerOption("limit", values.limit, DEFAULT_LIMIT, 1, MAX_LIMIT),
    rate: rateOption(values.rate, DEFAULT_RATE),
    reason: reasonOption(values.reason),
    // A dry run changes nothing, so it needs no one's token.
    requestedBy: values["dry-run"]
      ? requestedByOption(values.by)
      : replaySigner(identity(values), "events.replay-bulk", env),
    force: values.force,
    dryRun: values["dry-run"],
  };
}
