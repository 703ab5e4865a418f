import type { FastifyInstance } from "fastify";
import type { EventRegister } from "../../../register/port.ts";
import { loadEventDetails, loadEventList, searchEvents } from "../console-reads.ts";
import { parseListQuery, singleValues } from "../list-query.ts";
import { eventKeyOf, notFound, requireConsoleAction, sendPage, signedInOf } from "../requests.ts";
import { eventListPage, searchResultsPage } from "../views/event-list.ts";
import { eventPage } from "../views/event-page.ts";

export interface EventRoutesOptions {
  register: EventRegister;
  now: () => number;
}

/** Reading: the list, the search, one event. Every role may. */
export async function eventRoutes(app: FastifyInstance, options: EventRoutesOptions): Promise<void> {
  const { register, now } = options;
  const read = { schema: { hide: true }, onRequest: requireConsoleAction("events.read") };

  app.get("/", read, async (request, reply) => {
    const user = signedInOf(request);
    const data = await loadEventList(register, parseListQuery(request.query), user.principal);
    return sendPage(reply, 200, eventListPage(user, data, now()));
  });

  app.get("/search", read, async (request, reply) => {
    const term = (singleValues(request.query).q ?? "").trim();
    const user = signedInOf(request);
    const records = await searchEvents(register, term, user.principal);
    return sendPage(reply, 200, searchResultsPage(user, term, records));
  });

  app.get("/events/:sender/:eventId", read, async (request, reply) => {
    const { sender, eventId } = eventKeyOf(request.params);
    const user = signedInOf(request);
    const details = await loadEventDetails(register, sender, eventId, user.principal);
    if (details === undefined) throw notFound();
    const replayed = singleValues(request.query).replayed === "1";
    return sendPage(reply, 200, eventPage(user, details, { replayed }));
  });
}
