import type { EventRecord } from "../../../register/port.ts";
import { type Html, html } from "../html.ts";
import { consolePaths } from "../paths.ts";
import type { ReplayRequestFields } from "../replay-forms.ts";
import type { SignedIn } from "../sessions.ts";
import { statusBadge } from "./event-table.ts";
import { csrfField, page } from "./layout.ts";

/** Step two of a replay: what will happen, to which event, under whose name; nothing has changed yet. */
export function replayConfirmationPage(signedIn: SignedIn, record: EventRecord, request: ReplayRequestFields): Html {
  const eventPath = consolePaths.event(record.sender, record.eventId);
  const content = html`<p>The event goes back to PROCESSING with a fresh attempt budget and is sent to 1C again with the same bytes and Idempotency-Key. The replay is recorded under your name, ${signedIn.principal.name}.</p>
<dl class="facts">
<div><dt>Sender</dt><dd>${record.sender}</dd></div>
<div><dt>Event ID</dt><dd>${record.eventId}</dd></div>
<div><dt>Status now</dt><dd>${statusBadge(record.status)}</dd></div>
<div><dt>Reason</dt><dd>${request.reason}</dd></div>
${request.force ? html`<div><dt>Although it SUCCEEDED</dt><dd>yes: 1C answers with the order it already has</dd></div>` : ""}
</dl>
<form method="post" action="${consolePaths.replayConfirm(record.sender, record.eventId)}">
${csrfField(signedIn)}
<input type="hidden" name="reason" value="${request.reason}">
${request.force ? html`<input type="hidden" name="force" value="yes">` : ""}
<div class="actions"><button type="submit">Confirm replay</button> <a href="${eventPath}">Cancel</a></div>
</form>`;
  return page({ title: `Replay event ${record.eventId}?`, signedIn }, content);
}
