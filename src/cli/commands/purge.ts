import { parseArgs } from "node:util";
import { loadConfig } from "../../config/load-config.ts";
import type { EventRegister } from "../../register/port.ts";
import { DEFAULT_PURGE_BATCH_SIZE, purgeInBatches, purgeSourcesInBatches } from "../../retention/purger.ts";
import { integerOption, noPositionals, parsing } from "../args.ts";
import { type CliContext, type Command, UsageError } from "../context.ts";
import { iso } from "../format.ts";
import { ONEC_URL_NOT_NEEDED, withRegister } from "../open-register.ts";

const HOUR_MS = 3_600_000;
/** The same floor as RETENTION_HOURS: a younger row still guards against a sender's retries. */
const MIN_HOURS = 24;
const MAX_HOURS = 24 * 3650;
const MAX_BATCH_SIZE = 10_000;

export interface PurgeOptions {
  olderThanHours: number;
  batchSize: number;
  dryRun: boolean;
  /** FAILED_FINAL events too: support has given them up. */
  includeFailed: boolean;
}

/** Removes SUCCEEDED events (and FAILED_FINAL ones when asked) last updated more than `olderThanHours` ago; pending ones stay. */
export async function purgeEvents(options: PurgeOptions, register: EventRegister, io: CliContext): Promise<number> {
  const olderThan = io.now() - options.olderThanHours * HOUR_MS;
  const bound = { olderThan, includeFailed: options.includeFailed };
  const which = options.includeFailed ? "finished (SUCCEEDED and FAILED_FINAL)" : "SUCCEEDED";
  if (options.dryRun) {
    const count = await register.countFinished(bound);
    io.out(`would purge ${count} ${which} events older than ${iso(olderThan)} (dry run: nothing deleted)`);
    // The register counts no deliveries (source-port.ts): say that they go too, rather than nothing.
    io.out(
      `would purge the ignored platform deliveries received before ${iso(olderThan)} too (a dry run does not count them)`,
    );
    return 0;
  }
  const purged = await purgeInBatches(register, { ...bound, batchSize: options.batchSize });
  io.out(`purged ${purged} ${which} events older than ${iso(olderThan)}`);
  // The platforms' ignored deliveries age out with the same bound, as the running gateway purges them; unmapped ones wait for support.
  const deliveries = await purgeSourcesInBatches(register, { olderThan, batchSize: options.batchSize });
  io.out(`purged ${deliveries} ignored platform deliveries received before ${iso(olderThan)}`);
  return 0;
}

export const purgeCommand: Command = {
  name: "purge",
  synopsis: "purge [--older-than-hours N]",
  summary: "delete old SUCCEEDED events (FAILED_FINAL ones too with --include-failed)",
  help: `Usage: gateway purge [--older-than-hours N] [--force] [--batch-size N] [--include-failed] [--dry-run]

Deletes SUCCEEDED events that finished (or were last replayed) more than N
hours ago, with their attempts and replay audit rows. Pending events
(PROCESSING, FAILED_RETRYABLE) are never deleted. FAILED_FINAL events were
acknowledged to their sender and never booked in 1C: they stay until they
are replayed (and age out once SUCCEEDED), or until --include-failed is
given. Platforms' ignored webhook deliveries received before the same bound
go too (an accepted one goes with its event). A running gateway does the
same every PURGE_INTERVAL_MS on its own, without --include-failed.

A purged event is forgotten: if its sender sends the event_id again, it is
accepted as a new event and only 1C's own idempotency check stops a second order.
The gateway counts on remembering events for RETENTION_HOURS: a platform's
webhook for a payment made up to RETENTION_HOURS less a day ago is taken as a
resend (WooCommerce sends the whole order again on each of its updates), so an
age under RETENTION_HOURS is refused unless --force is given.

Options:
  --older-than-hours N  age limit (default RETENTION_HOURS, 720 = 30 days;
                        at least ${MIN_HOURS}, and at least RETENTION_HOURS
                        unless --force)
  --force               take an age under RETENTION_HOURS: a platform's
                        resend of a purged paid order becomes a new event
  --batch-size N        events per transaction (default ${DEFAULT_PURGE_BATCH_SIZE}, up to ${MAX_BATCH_SIZE})
  --include-failed      delete FAILED_FINAL events of that age too: support
                        has given them up (list them first:
                        gateway list --status FAILED_FINAL)
  --dry-run             count what would be deleted, delete nothing

Reads DATABASE_URL; ONEC_URL is not needed.`,
  async run(argv, context) {
    const { values, positionals } = parsing(() =>
      parseArgs({
        args: argv,
        options: {
          "older-than-hours": { type: "string" },
          "batch-size": { type: "string" },
          "dry-run": { type: "boolean", default: false },
          force: { type: "boolean", default: false },
          "include-failed": { type: "boolean", default: false },
        },
        allowPositionals: true,
      }),
    );
    noPositionals(positionals);
    const retentionHours = loadConfig(context.env, { onecUrl: ONEC_URL_NOT_NEEDED }).retentionMs / HOUR_MS;
    const options: PurgeOptions = {
      olderThanHours: integerOption(
        "older-than-hours",
        values["older-than-hours"],
        retentionHours,
        MIN_HOURS,
        MAX_HOURS,
      ),
      batchSize: integerOption("batch-size", values["batch-size"], DEFAULT_PURGE_BATCH_SIZE, 1, MAX_BATCH_SIZE),
      dryRun: values["dry-run"],
      includeFailed: values["include-failed"],
    };
    if (options.olderThanHours < retentionHours && !values.force) {
      throw new UsageError(
        `--older-than-hours ${options.olderThanHours} is under RETENTION_HOURS (${retentionHours}): the gateway takes a platform's webhook for a payment made up to RETENTION_HOURS less a day ago as a resend of an event it still holds, so a WooCommerce resend of a paid order purged sooner would be accepted as a new event and sent to 1C again. Add --force if that is what you want`,
      );
    }
    return withRegister(context.env, (register) => purgeEvents(options, register, context));
  },
};
