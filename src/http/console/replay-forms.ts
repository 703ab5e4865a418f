import { REPLAY_REASON_MAX } from "../../operations/replay-event.ts";
import { BULK_STATUSES, type BulkSelection, decodeEventKeys, type EventKey } from "./bulk-replay.ts";
import { ConsoleError } from "./console-error.ts";
import type { FormFields } from "./form-body.ts";
import { parseSender, parseTime } from "./list-query.ts";

/** What the replay forms post, checked: a reason is required, and the audit keeps it as written (trimmed). */

/** One replay as the event page's form asks for it. */
export interface ReplayRequestFields {
  reason: string;
  /** Send a SUCCEEDED event again. */
  force: boolean;
}

export function replayRequestOf(form: FormFields): ReplayRequestFields {
  return { reason: reasonOf(form), force: form.get("force") === "yes" };
}

export function reasonOf(form: FormFields): string {
  const reason = (form.get("reason") ?? "").trim();
  if (reason === "") throw badForm("a replay needs a reason: say what was fixed, or why it is sent again");
  if (reason.length > REPLAY_REASON_MAX) throw badForm(`a reason has at most ${REPLAY_REASON_MAX} characters`);
  return reason;
}

export function bulkSelectionOf(form: FormFields): BulkSelection {
  const status = BULK_STATUSES.find((candidate) => candidate === form.get("status"));
  if (status === undefined) throw badForm(`bulk replay takes the status ${BULK_STATUSES.join(" or ")}`);
  return {
    status,
    sender: parseSender(form.get("sender")),
    since: parseTime("since", form.get("since")),
    until: parseTime("until", form.get("until")),
  };
}

/** The events a confirmed bulk replay takes: exactly the ones its preview listed. */
export function previewedEventsOf(form: FormFields): EventKey[] {
  const keys = decodeEventKeys(form.get("events") ?? "");
  if (keys === undefined) throw badForm("the list of events is damaged; preview the bulk replay again");
  return keys;
}

function badForm(detail: string): ConsoleError {
  return new ConsoleError(400, "Check the form", detail);
}
