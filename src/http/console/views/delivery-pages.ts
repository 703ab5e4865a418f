import type { DeliveryForReader } from "../../../operations/remap-delivery.ts";
import { REPLAY_REASON_MAX } from "../../../operations/replay-event.ts";
import type { SourceDelivery, SourceOutcome } from "../../../register/source-port.ts";
import type { PlatformIds } from "../../../sources/port.ts";
import type { DeliveryListData } from "../console-reads.ts";
import { DELIVERY_OUTCOMES, type DeliveryQuery, deliveryQueryParams } from "../delivery-query.ts";
import { type Html, html } from "../html.ts";
import { consolePaths, withQuery } from "../paths.ts";
import type { SignedIn } from "../sessions.ts";
import { utcText } from "../time-text.ts";
import { csrfField, mayReplay, page } from "./layout.ts";

/** When support mapped a delivery again, who did and why (a remap before migration 0010 kept the time only). */
export function remappedFacts(delivery: SourceDelivery): Html | "" {
  if (delivery.remappedAt === null) return "";
  const by = delivery.remappedBy === null ? "" : html` by ${delivery.remappedBy}`;
  const why = delivery.remapReason === null ? "" : html`<div><dt>Why</dt><dd>${delivery.remapReason}</dd></div>`;
  return html`<div><dt>Mapped again</dt><dd>${utcText(delivery.remappedAt)}${by}</dd></div>${why}`;
}

/** The platforms' deliveries the gateway kept, newest first: outcome tabs, a sender filter, paging by id. */
export function deliveryListPage(signedIn: SignedIn, data: DeliveryListData): Html {
  const { query, deliveries, older } = data;
  const content = html`<p>What Shopify, WooCommerce and Tilda sent: the first delivery of each accepted payment, every delivery that was not a payment (ignored), and every payment that could not be mapped (unmapped), which waits here until its sender's settings are fixed and it is mapped again.</p>
${outcomeTabs(query)}
${filterForm(query)}
${deliveryTable(deliveries, `${query.outcome ?? "All"} deliveries, newest first${query.before === undefined ? "" : " (older page)"}`)}
<nav class="paging" aria-label="Pages">
${query.before === undefined ? "" : html`<a href="${withQuery(consolePaths.deliveries, deliveryQueryParams(query))}">Newest</a>`}
${older === undefined ? "" : html`<a rel="next" href="${withQuery(consolePaths.deliveries, { ...deliveryQueryParams(query), before: String(older) })}">Older</a>`}
</nav>`;
  return page({ title: "Platform deliveries", signedIn }, content);
}

function outcomeTabs(query: DeliveryQuery): Html {
  const tab = (outcome: SourceOutcome | undefined, label: string) => {
    const href = withQuery(consolePaths.deliveries, { ...deliveryQueryParams(query), outcome });
    return html`<li><a href="${href}"${query.outcome === outcome ? html` aria-current="page"` : ""}>${label}</a></li>`;
  };
  return html`<nav class="tabs" aria-label="Outcomes">
<ul>
${tab(undefined, "All")}
${DELIVERY_OUTCOMES.map((outcome) => tab(outcome, outcome))}
</ul>
</nav>`;
}

function filterForm(query: DeliveryQuery): Html {
  return html`<form class="filters" method="get" action="${consolePaths.deliveries}" aria-label="Filters">
<div><label for="filter-outcome">Outcome</label>
<select id="filter-outcome" name="outcome">
<option value="">Any</option>
${DELIVERY_OUTCOMES.map((outcome) => html`<option value="${outcome}"${query.outcome === outcome ? html` selected` : ""}>${outcome}</option>`)}
</select></div>
<div><label for="filter-sender">Sender</label>
<input id="filter-sender" name="sender" value="${query.sender ?? ""}" maxlength="64" autocomplete="off"></div>
<div class="actions"><button type="submit">Apply filters</button></div>
</form>`;
}

function deliveryTable(deliveries: readonly SourceDelivery[], caption: string): Html {
  if (deliveries.length === 0) return html`<p class="empty">No deliveries match.</p>`;
  return html`<table class="deliveries">
<caption>${caption}</caption>
<thead><tr>
<th scope="col">Received (UTC)</th><th scope="col">Sender</th><th scope="col">Platform</th><th scope="col">Key</th>
<th scope="col">Outcome</th><th scope="col">Reason</th><th scope="col">Event</th>
</tr></thead>
<tbody>
${deliveries.map(
  (delivery) => html`<tr>
<td class="nowrap"><a href="${consolePaths.delivery(delivery.id)}">${utcText(delivery.receivedAt)}</a></td>
<td>${delivery.sender}</td>
<td>${delivery.platform}</td>
<td>${delivery.key === "" ? "—" : delivery.key}</td>
<td>${outcomeBadge(delivery)}</td>
<td class="error-text">${delivery.reason ?? ""}</td>
<td>${eventLink(delivery)}</td>
</tr>`,
)}
</tbody>
</table>`;
}

/** The outcome as a word; an unmapped delivery mapped since says so. */
function outcomeBadge(delivery: SourceDelivery): Html {
  const remapped = delivery.outcome === "unmapped" && delivery.remappedAt !== null;
  return html`<span class="outcome outcome-${delivery.outcome}">${delivery.outcome}</span>${remapped ? html` <span class="quiet">(mapped again)</span>` : ""}`;
}

function eventLink(delivery: SourceDelivery): Html | string {
  if (delivery.eventId === null) return "—";
  return html`<a href="${consolePaths.event(delivery.sender, delivery.eventId)}">${delivery.eventId}</a>`;
}

/** What the page says above the facts: the remap just done, or why it did not map. */
export type DeliveryNotice = { kind: "none" } | { kind: "remapped" } | { kind: "still-unmapped"; reason: string };

/** One delivery: its facts, the platform's ids, the payload as received, and "Map again" for an unmapped one. */
export function deliveryPage(signedIn: SignedIn, seen: DeliveryForReader, notice: DeliveryNotice): Html {
  const { delivery } = seen;
  const content = html`${noticeOf(delivery, notice)}
<dl class="facts">
<div><dt>Delivery</dt><dd>${delivery.id}</dd></div>
<div><dt>Sender</dt><dd>${delivery.sender}</dd></div>
<div><dt>Platform</dt><dd>${delivery.platform}</dd></div>
<div><dt>Key</dt><dd>${delivery.key === "" ? "—" : delivery.key}</dd></div>
<div><dt>Outcome</dt><dd>${outcomeBadge(delivery)}</dd></div>
${delivery.reason === null ? "" : html`<div><dt>Reason</dt><dd>${delivery.reason}</dd></div>`}
<div><dt>Event</dt><dd>${eventLink(delivery)}</dd></div>
<div><dt>Received</dt><dd>${utcText(delivery.receivedAt)}</dd></div>
${remappedFacts(delivery)}
<div><dt>Correlation ID</dt><dd>${delivery.correlationId}</dd></div>
<div><dt>Content type</dt><dd>${delivery.contentType ?? "none"}</dd></div>
</dl>
${platformIds(seen.ids)}
${remappable(delivery) && mayReplay(signedIn) ? remapForm(signedIn, delivery) : ""}
<section aria-labelledby="payload-heading">
<h2 id="payload-heading">Payload</h2>
<p class="quiet">${seen.masked ? "As received, written again with e-mail addresses and phone numbers masked (your role does not read them)." : "As received."}</p>
<pre class="body">${seen.payload}</pre>
</section>`;
  return page({ title: `Platform delivery ${delivery.id}`, signedIn }, content);
}

function noticeOf(delivery: SourceDelivery, notice: DeliveryNotice): Html | string {
  if (notice.kind === "remapped" && delivery.eventId !== null) {
    return html`<p class="notice" role="status">Mapped again: it is now event <a href="${consolePaths.event(delivery.sender, delivery.eventId)}">${delivery.eventId}</a>, on its way to 1C.</p>`;
  }
  if (notice.kind === "still-unmapped") {
    return html`<p class="problem" role="alert">Still does not map: ${notice.reason}. Nothing was recorded; fix the sender's settings in SOURCES_FILE, restart the gateway, and map it again.</p>`;
  }
  return "";
}

/** The platform's own ids (webhook id, topic, shop, delivery id…), whatever the platform gave. */
export function platformIds(ids: PlatformIds): Html | string {
  const entries = Object.entries(ids);
  if (entries.length === 0) return "";
  return html`<section aria-labelledby="ids-heading">
<h2 id="ids-heading">Platform ids</h2>
<dl class="facts">
${entries.map(([name, value]) => html`<div><dt>${name}</dt><dd>${value}</dd></div>`)}
</dl>
</section>`;
}

function remappable(delivery: SourceDelivery): boolean {
  return delivery.outcome === "unmapped" && delivery.remappedAt === null;
}

/** Reads the stored payload again with the sender's settings as they are now; recorded under your name with the reason. */
function remapForm(signedIn: SignedIn, delivery: SourceDelivery): Html {
  return html`<section aria-labelledby="remap-heading">
<h2 id="remap-heading">Map again</h2>
<p>Reads this payload again with the sender's settings as they are now (SOURCES_FILE, read when the gateway started). If it maps, the order is recorded and sent to 1C like any other; if not, nothing changes and the reason is shown. Logged under your name with the reason.</p>
<form method="post" action="${consolePaths.remap(delivery.id)}">
${csrfField(signedIn)}
<div><label for="remap-reason">Reason</label>
<textarea id="remap-reason" name="reason" rows="2" maxlength="${REPLAY_REASON_MAX}" required></textarea></div>
<div class="actions"><button type="submit">Map again</button></div>
</form>
</section>`;
}
