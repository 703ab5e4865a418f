import { ALL_STATUSES, type EventStatus } from "../../../domain/event-status.ts";
import type { Backlog, EventRecord } from "../../../register/port.ts";
import type { EventListData } from "../console-reads.ts";
import { type Html, html } from "../html.ts";
import { cursorParams, type ListQuery, listQueryParams } from "../list-query.ts";
import { consolePaths, withQuery } from "../paths.ts";
import type { SignedIn } from "../sessions.ts";
import { ageText, utcInputValue, utcText } from "../time-text.ts";
import { eventTable } from "./event-table.ts";
import { page } from "./layout.ts";

/** The console's home: the backlog at a glance, status tabs, filters, and the events newest first. */
export function eventListPage(signedIn: SignedIn, data: EventListData, now: number): Html {
  const { query, records, older, backlog, counts } = data;
  const content = html`${backlogSummary(backlog, now)}
${statusTabs(query, counts)}
${filterForm(query)}
${eventTable(records, caption(query))}
<nav class="paging" aria-label="Pages">
${query.before === undefined ? "" : html`<a href="${withQuery(consolePaths.home, listQueryParams(query))}">Newest</a>`}
${older === undefined ? "" : html`<a rel="next" href="${withQuery(consolePaths.home, { ...listQueryParams(query), ...cursorParams(older) })}">Older</a>`}
</nav>`;
  return page({ title: "Events", signedIn }, content);
}

function caption(query: ListQuery): string {
  return `${query.status ?? "All"} events, newest first${query.before === undefined ? "" : " (older page)"}`;
}

/** The two numbers support watches: how much waits and for how long, and what has given up. */
function backlogSummary(backlog: Backlog, now: number): Html {
  const oldest = backlog.oldestPendingReceivedAt;
  return html`<section class="backlog" aria-labelledby="backlog-heading">
<h2 id="backlog-heading">Backlog</h2>
<dl>
<div><dt>Pending (PROCESSING or FAILED_RETRYABLE)</dt><dd>${backlog.pending}</dd></div>
<div><dt>Oldest pending</dt><dd>${oldest === null ? "none" : html`${ageText(now - oldest)} <span class="quiet">(received ${utcText(oldest)})</span>`}</dd></div>
<div><dt>FAILED_FINAL</dt><dd>${backlog.failedFinal}</dd></div>
</dl>
</section>`;
}

/** One tab per status with its count under the other filters (sender, since, until), which it keeps. */
function statusTabs(query: ListQuery, counts: Record<EventStatus, number>): Html {
  const tab = (status: EventStatus | undefined, label: string) => {
    const href = withQuery(consolePaths.home, { ...listQueryParams(query), status });
    const count = status === undefined ? Object.values(counts).reduce((a, b) => a + b, 0) : counts[status];
    return html`<li><a href="${href}"${query.status === status ? html` aria-current="page"` : ""}>${label}${count === undefined ? "" : ` (${count})`}</a></li>`;
  };
  return html`<nav class="tabs" aria-label="Statuses">
<ul>
${tab(undefined, "All")}
${ALL_STATUSES.map((status) => tab(status, status))}
</ul>
</nav>`;
}

function filterForm(query: ListQuery): Html {
  return html`<form class="filters" method="get" action="${consolePaths.home}" aria-label="Filters">
<div><label for="filter-status">Status</label>
<select id="filter-status" name="status">
<option value="">Any</option>
${ALL_STATUSES.map((status) => html`<option value="${status}"${query.status === status ? html` selected` : ""}>${status}</option>`)}
</select></div>
<div><label for="filter-sender">Sender</label>
<input id="filter-sender" name="sender" value="${query.sender ?? ""}" maxlength="64" autocomplete="off"></div>
<div><label for="filter-since">Received since (UTC)</label>
<input id="filter-since" name="since" type="datetime-local" step="1" value="${utcInputValue(query.since)}"></div>
<div><label for="filter-until">Received until (UTC)</label>
<input id="filter-until" name="until" type="datetime-local" step="1" value="${utcInputValue(query.until)}"></div>
<div class="actions"><button type="submit">Apply filters</button></div>
</form>`;
}

/** Search results: the same table, with the term in the heading. */
export function searchResultsPage(signedIn: SignedIn, term: string, records: readonly EventRecord[]): Html {
  const content = html`<p>Events whose event_id, correlation id, 1C order id or number, or the site's order id or number is exactly <q>${term}</q>.</p>
${eventTable(records, `Search results for ${term}`)}`;
  return page({ title: "Search", signedIn, searchTerm: term }, content);
}
