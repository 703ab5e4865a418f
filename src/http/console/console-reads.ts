import type { Principal } from "../../config/operators.ts";
import type { EventStatus } from "../../domain/event-status.ts";
import { type EventForReader, eventForReader, recordsForReader } from "../../operations/event-for-reader.ts";
import { type DeliveryForReader, deliveryForReader } from "../../operations/remap-delivery.ts";
import type { Backlog, EventRecord, EventRegister, PageCursor, ReplayRecord } from "../../register/port.ts";
import type { SourceDelivery } from "../../register/source-port.ts";
import type { DeliveryQuery } from "./delivery-query.ts";
import type { ListQuery } from "./list-query.ts";

/** What the console's pages read from the register, one function per page. */

/** Events per page of the list. */
export const PAGE_SIZE = 50;
/** Search hits shown: a term matches a handful of events, never a page's worth. */
export const SEARCH_LIMIT = 50;

export interface EventListData {
  query: ListQuery;
  records: EventRecord[];
  /** Where the "Older" page starts; undefined on the last page. */
  older: PageCursor | undefined;
  backlog: Backlog;
  /** Events per status within the filters other than status: the tabs' numbers. */
  counts: Record<EventStatus, number>;
}

export async function loadEventList(
  register: EventRegister,
  query: ListQuery,
  reader: Principal,
): Promise<EventListData> {
  const { status, sender, since, until, before } = query;
  // One row more than shown says whether an older page exists, so "Older" never leads to an empty page.
  const [rows, backlog, counts] = await Promise.all([
    register.page({ status, sender, since, until, before, limit: PAGE_SIZE + 1 }),
    register.backlog(),
    register.countByStatus({ sender, since, until }),
  ]);
  const records = recordsForReader(rows.slice(0, PAGE_SIZE), reader);
  const last = records.at(-1);
  const older =
    rows.length > PAGE_SIZE && last !== undefined
      ? { receivedAt: last.receivedAt, sender: last.sender, eventId: last.eventId }
      : undefined;
  return { query, records, older, backlog, counts };
}

/** Events whose event_id, correlation id, 1C order or the site's order is exactly `term`, newest first. */
export async function searchEvents(register: EventRegister, term: string, reader: Principal): Promise<EventRecord[]> {
  return recordsForReader(await register.search(term, SEARCH_LIMIT), reader);
}

/** The event as this person may see it (eventForReader), with its replays and the platform delivery it came from. */
export interface EventDetails extends EventForReader {
  replays: ReplayRecord[];
  /** The platform delivery it came from, if it came from a platform. */
  delivery: SourceDelivery | undefined;
}

/** Everything the event page shows, the body masked for anyone who may not read personal data. */
export async function loadEventDetails(
  register: EventRegister,
  sender: string,
  eventId: string,
  reader: Principal,
): Promise<EventDetails | undefined> {
  const record = await register.find(sender, eventId);
  if (record === undefined) return undefined;
  const [attempts, replays, delivery] = await Promise.all([
    register.listAttempts(sender, eventId),
    register.listReplays(sender, eventId),
    register.sources.ofEvent(sender, eventId),
  ]);
  return { ...eventForReader(record, attempts, reader), replays, delivery };
}

export interface DeliveryListData {
  query: DeliveryQuery;
  deliveries: SourceDelivery[];
  /** Where the "Older" page starts; undefined on the last page. */
  older: number | undefined;
}

/** The platforms' kept deliveries, newest first, a page at a time. */
export async function loadDeliveryList(register: EventRegister, query: DeliveryQuery): Promise<DeliveryListData> {
  const { outcome, sender, before } = query;
  // One row more than shown says whether an older page exists.
  const rows = await register.sources.list({
    limit: PAGE_SIZE + 1,
    ...(outcome === undefined ? {} : { outcome }),
    ...(sender === undefined ? {} : { sender }),
    ...(before === undefined ? {} : { beforeId: before }),
  });
  const deliveries = rows.slice(0, PAGE_SIZE);
  const older = rows.length > PAGE_SIZE ? deliveries.at(-1)?.id : undefined;
  return { query, deliveries, older };
}

/** One delivery, its payload masked for anyone who may not read personal data. */
export async function loadDelivery(
  register: EventRegister,
  id: number,
  reader: Principal,
): Promise<DeliveryForReader | undefined> {
  const delivery = await register.sources.find(id);
  return delivery === undefined ? undefined : deliveryForReader(delivery, reader);
}
