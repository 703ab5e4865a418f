import { REPLAY_REASON_MAX } from "../../../operations/replay-event.ts";
import type { EventRecord } from "../../../register/port.ts";
import {
  BULK_REPLAY_MAX,
  BULK_STATUSES,
  type BulkReplayLine,
  type BulkSelection,
  encodeEventKeys,
} from "../bulk-replay.ts";
import { type Html, html } from "../html.ts";
import { consolePaths } from "../paths.ts";
import type { SignedIn } from "../sessions.ts";
import { utcText } from "../time-text.ts";
import { eventTable } from "./event-table.ts";
import { csrfField, page } from "./layout.ts";

/** Step one: which events, and why. The answer is a dry run; nothing changes before the confirmation. */
export function bulkReplayFormPage(signedIn: SignedIn): Html {
  const content = html`<p>Replays every event in one status received in a time window, oldest first, at most ${BULK_REPLAY_MAX} per run. You see the list before anything changes.</p>
<form class="bulk" method="post" action="${consolePaths.bulkReplayPreview}">
${csrfField(signedIn)}
<div><label for="bulk-status">Status</label>
<select id="bulk-status" name="status">
${BULK_STATUSES.map((status) => html`<option value="${status}">${status}</option>`)}
</select></div>
<div><label for="bulk-sender">Sender (empty: every sender)</label>
<input id="bulk-sender" name="sender" maxlength="64" autocomplete="off"></div>
<div><label for="bulk-since">Received since (UTC)</label>
<input id="bulk-since" name="since" type="datetime-local" step="1"></div>
<div><label for="bulk-until">Received until (UTC)</label>
<input id="bulk-until" name="until" type="datetime-local" step="1"></div>
<div><label for="bulk-reason">Reason</label>
<textarea id="bulk-reason" name="reason" rows="2" maxlength="${REPLAY_REASON_MAX}" required></textarea></div>
<div class="actions"><button type="submit">Preview</button></div>
</form>`;
  return page({ title: "Bulk replay", signedIn }, content);
}

/** Step two: the dry run. Lists exactly the events the confirmation replays. */
export function bulkReplayPreviewPage(
  signedIn: SignedIn,
  selection: BulkSelection,
  reason: string,
  records: readonly EventRecord[],
): Html {
  const window = `${selection.since === undefined ? "any time" : utcText(selection.since)} to ${selection.until === undefined ? "now" : utcText(selection.until)}`;
  const content = html`<p role="status">Dry run: nothing has changed. ${records.length} ${selection.status} event${records.length === 1 ? "" : "s"} from ${selection.sender ?? "every sender"}, received ${window}, would be replayed with the reason <q>${reason}</q>.</p>
${records.length === BULK_REPLAY_MAX ? html`<p class="notice">Only the oldest ${BULK_REPLAY_MAX} are taken; run again afterwards for the rest.</p>` : ""}
${eventTable(records, "Events that would be replayed, oldest first")}
${
  records.length === 0
    ? html`<p><a href="${consolePaths.bulkReplay}">Change the selection</a></p>`
    : html`<form method="post" action="${consolePaths.bulkReplayConfirm}">
${csrfField(signedIn)}
<input type="hidden" name="reason" value="${reason}">
<input type="hidden" name="events" value="${encodeEventKeys(records)}">
<div class="actions"><button type="submit">Replay ${records.length} event${records.length === 1 ? "" : "s"}</button> <a href="${consolePaths.bulkReplay}">Cancel</a></div>
</form>`
}`;
  return page({ title: "Bulk replay: preview", signedIn }, content);
}

/** Step three: what happened to each event. */
export function bulkReplayResultPage(signedIn: SignedIn, lines: readonly BulkReplayLine[]): Html {
  const replayed = lines.filter((line) => line.outcome === "replayed").length;
  const content = html`<p role="status">Replayed ${replayed}, not replayed ${lines.length - replayed}.</p>
<table>
<caption>Each event of the run</caption>
<thead><tr><th scope="col">Sender</th><th scope="col">Event ID</th><th scope="col">Outcome</th></tr></thead>
<tbody>
${lines.map(
  (line) =>
    html`<tr><td>${line.sender}</td><td><a href="${consolePaths.event(line.sender, line.eventId)}">${line.eventId}</a></td><td>${line.outcome}</td></tr>`,
)}
</tbody>
</table>
<p><a href="${consolePaths.home}">Back to the events</a></p>`;
  return page({ title: "Bulk replay: done", signedIn }, content);
}
