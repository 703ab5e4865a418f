import { storedIds } from "../../../accept/webhook-intake.ts";
import { EventStatus, isFinished } from "../../../domain/event-status.ts";
import { REPLAY_REASON_MAX } from "../../../operations/replay-event.ts";
import type { AttemptKind, AttemptRecord, EventRecord, ReplayRecord } from "../../../register/port.ts";
import type { SourceDelivery } from "../../../register/source-port.ts";
import type { EventDetails } from "../console-reads.ts";
import { type Html, html } from "../html.ts";
import { consolePaths } from "../paths.ts";
import type { SignedIn } from "../sessions.ts";
import { utcText } from "../time-text.ts";
import { remappedFacts } from "./delivery-pages.ts";
import { statusBadge } from "./event-table.ts";
import { csrfField, mayReplay, page } from "./layout.ts";

/**
 * How often a pending event's page reloads itself (with the script): soon
 * while an attempt is due or running, rarely while it waits for a retry.
 */
const REFRESH_SECONDS: Partial<Record<EventStatus, number>> = {
  [EventStatus.PROCESSING]: 2,
  [EventStatus.FAILED_RETRYABLE]: 10,
};

export interface EventPageNotice {
  /** The replay just confirmed: say so, and that the page follows the new attempt. */
  replayed: boolean;
}

/** Everything about one event: status, 1C order, correlation id, attempts, replays, body; the replay form for operators. */
export function eventPage(signedIn: SignedIn, details: EventDetails, notice: EventPageNotice): Html {
  const { record } = details;
  const pending = !isFinished(record.status);
  const content = html`${notice.replayed ? html`<p class="notice" role="status">Replay recorded. ${pending ? "This page follows the new attempt until the event ends." : ""}</p>` : ""}
<p class="event-status">Status: ${statusBadge(record.status)}</p>
${summary(record)}
${details.delivery === undefined ? "" : platformSection(details.delivery)}
${attemptsSection(details.attempts)}
${replaysSection(details.replays)}
${mayReplay(signedIn) ? replayForm(signedIn, record) : ""}
${bodySection(details)}`;
  return page({ title: `Event ${record.eventId}`, signedIn, refreshSeconds: REFRESH_SECONDS[record.status] }, content);
}

function summary(record: EventRecord): Html {
  const pending = !isFinished(record.status);
  return html`<dl class="facts">
<div><dt>Sender</dt><dd>${record.sender}</dd></div>
<div><dt>Event ID</dt><dd>${record.eventId}</dd></div>
<div><dt>1C order</dt><dd>${record.order === null ? "none yet" : html`${record.order.number} <span class="quiet">(id ${record.order.id})</span>`}</dd></div>
<div><dt>Correlation ID</dt><dd>${record.correlationId}</dd></div>
<div><dt>Received</dt><dd>${utcText(record.receivedAt)}</dd></div>
<div><dt>Updated</dt><dd>${utcText(record.updatedAt)}</dd></div>
<div><dt>Attempts</dt><dd>${record.attempts}</dd></div>
${record.lastError === null ? "" : html`<div><dt>Last error</dt><dd>${record.lastErrorClass === null ? "" : html`<code>${record.lastErrorClass}</code>: `}${record.lastError}</dd></div>`}
${pending && record.nextAttemptAt !== null ? html`<div><dt>Next attempt</dt><dd>${utcText(record.nextAttemptAt)}</dd></div>` : ""}
${record.leaseUntil === null ? "" : html`<div><dt>Lease</dt><dd>${record.leaseOwner ?? "?"} until ${utcText(record.leaseUntil)}</dd></div>`}
</dl>`;
}

/** Where a platform's order came from: the platform, its own ids for the delivery, and the delivery as kept. */
function platformSection(delivery: SourceDelivery): Html {
  const ids = Object.entries(storedIds(delivery).ids);
  return html`<section aria-labelledby="platform-heading">
<h2 id="platform-heading">Platform</h2>
<dl class="facts">
<div><dt>Platform</dt><dd>${delivery.platform}</dd></div>
${ids.map(([name, value]) => html`<div><dt>${name}</dt><dd>${value}</dd></div>`)}
<div><dt>Received</dt><dd>${utcText(delivery.receivedAt)}</dd></div>
${remappedFacts(delivery)}
<div><dt>Delivery</dt><dd><a href="${consolePaths.delivery(delivery.id)}">delivery ${delivery.id}, with its payload as received</a></dd></div>
</dl>
</section>`;
}

/** The timeline: one row per attempt, what 1C answered, how long it took, and whether its outcome was applied. */
function attemptsSection(attempts: readonly AttemptRecord[]): Html {
  const rows = attempts.map(
    (attempt) => html`<tr>
<td class="number">${attempt.attempt}</td>
<td class="nowrap">${utcText(attempt.startedAt)}</td>
<td>${attempt.outcome ?? "unfinished"}</td>
<td class="number">${attempt.httpStatus ?? "—"}</td>
<td class="number">${attempt.durationMs === null ? "—" : `${attempt.durationMs} ms`}</td>
<td>${attempt.errorClass ?? ""}</td>
<td class="error-text">${attempt.detail ?? ""}</td>
<td>${attempt.worker}</td>
<td>${appliedText(attempt.applied)}</td>
<td>${claimedText(attempt.kind)}</td>
</tr>`,
  );
  return html`<section aria-labelledby="attempts-heading">
<h2 id="attempts-heading">Attempts</h2>
${
  attempts.length === 0
    ? html`<p class="empty">No attempt yet.</p>`
    : html`<table class="attempts">
<caption>Every call to 1C, oldest first</caption>
<thead><tr><th scope="col">#</th><th scope="col">Started (UTC)</th><th scope="col">Outcome</th><th scope="col">1C code</th>
<th scope="col">Latency</th><th scope="col">Error class</th><th scope="col">Message</th><th scope="col">Worker</th><th scope="col">Applied</th><th scope="col">Claimed</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
}
</section>`;
}

function appliedText(applied: boolean | null): string {
  if (applied === null) return "running";
  return applied ? "applied" : "stale (lease lost; kept here only)";
}

/** "ahead": claimed before a call slot was free, and kept ready for it (port.ts, AttemptKind). */
function claimedText(kind: AttemptKind | undefined): string {
  return kind === "ahead" ? "ahead" : "just in time";
}

function replaysSection(replays: readonly ReplayRecord[]): Html {
  return html`<section aria-labelledby="replays-heading">
<h2 id="replays-heading">Replays</h2>
${
  replays.length === 0
    ? html`<p class="empty">Never replayed.</p>`
    : html`<table class="replays">
<caption>Who replayed it, when and why</caption>
<thead><tr><th scope="col">Requested (UTC)</th><th scope="col">By</th><th scope="col">Reason</th><th scope="col">From status</th><th scope="col">Forced</th></tr></thead>
<tbody>
${replays.map(
  (replay) => html`<tr>
<td class="nowrap">${utcText(replay.requestedAt)}</td>
<td>${replay.requestedBy}</td>
<td>${replay.reason}</td>
<td>${replay.fromStatus}</td>
<td>${replay.forced ? "yes" : "no"}</td>
</tr>`,
)}
</tbody>
</table>`
}
</section>`;
}

/** Step one of a replay: the reason. The server answers with a confirmation page; nothing changes before it. */
function replayForm(signedIn: SignedIn, record: EventRecord): Html {
  return html`<section aria-labelledby="replay-heading">
<h2 id="replay-heading">Replay</h2>
<p>Sends the event to 1C again, with the same bytes and the same Idempotency-Key, and a fresh attempt budget. The replay is recorded under your name with the reason.</p>
<form method="post" action="${consolePaths.replay(record.sender, record.eventId)}">
${csrfField(signedIn)}
<div><label for="replay-reason">Reason</label>
<textarea id="replay-reason" name="reason" rows="2" maxlength="${REPLAY_REASON_MAX}" required></textarea></div>
${
  record.status === EventStatus.SUCCEEDED
    ? html`<div class="check"><input id="replay-force" type="checkbox" name="force" value="yes">
<label for="replay-force">Send again although it SUCCEEDED (1C answers with the order it already has)</label></div>`
    : ""
}
<div class="actions"><button type="submit">Replay</button></div>
</form>
</section>`;
}

function bodySection(details: EventDetails): Html {
  return html`<section aria-labelledby="body-heading">
<h2 id="body-heading">Body</h2>
<p class="quiet">${details.masked ? "As accepted, with e-mail addresses and phone numbers masked (your role does not read them)." : "As accepted."}</p>
<pre class="body">${JSON.stringify(details.body, null, 2)}</pre>
</section>`;
}
