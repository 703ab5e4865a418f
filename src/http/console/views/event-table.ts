import type { EventRecord } from "../../../register/port.ts";
import { type Html, html } from "../html.ts";
import { consolePaths } from "../paths.ts";
import { utcText } from "../time-text.ts";

/** The events of a list or a search, one row each, every event_id a link to its page. */
export function eventTable(records: readonly EventRecord[], caption: string): Html {
  if (records.length === 0) return html`<p class="empty">No events match.</p>`;
  return html`<table class="events">
<caption>${caption}</caption>
<thead><tr>
<th scope="col">Received (UTC)</th><th scope="col">Sender</th><th scope="col">Event ID</th><th scope="col">Status</th>
<th scope="col">Attempts</th><th scope="col">1C order</th><th scope="col">Last error</th>
</tr></thead>
<tbody>
${records.map(eventRow)}
</tbody>
</table>`;
}

function eventRow(record: EventRecord): Html {
  return html`<tr>
<td class="nowrap">${utcText(record.receivedAt)}</td>
<td>${record.sender}</td>
<td><a href="${consolePaths.event(record.sender, record.eventId)}">${record.eventId}</a></td>
<td>${statusBadge(record.status)}</td>
<td class="number">${record.attempts}</td>
<td class="nowrap">${record.order?.number ?? "—"}</td>
<td class="error-text">${record.lastError ?? ""}</td>
</tr>`;
}

/** A status as text, styled by its class: the word itself carries the meaning, colour only helps. */
export function statusBadge(status: string): Html {
  return html`<span class="status status-${status.toLowerCase().replace(/_/g, "-")}">${status}</span>`;
}
