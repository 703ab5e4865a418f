import type { FastifyInstance } from "fastify";
import { lookUpEvent } from "../../../operations/look-up-event.ts";
import { replayEvent } from "../../../operations/replay-event.ts";
import type { EventRegister } from "../../../register/port.ts";
import { previewBulkReplay, replayEach } from "../bulk-replay.ts";
import { ConsoleError } from "../console-error.ts";
import { formOf } from "../form-body.ts";
import { consolePaths, withQuery } from "../paths.ts";
import { bulkSelectionOf, previewedEventsOf, reasonOf, replayRequestOf } from "../replay-forms.ts";
import { eventKeyOf, notFound, requireConsoleAction, sendPage, signedInOf } from "../requests.ts";
import { bulkReplayFormPage, bulkReplayPreviewPage, bulkReplayResultPage } from "../views/bulk-replay-pages.ts";
import { replayConfirmationPage } from "../views/replay-pages.ts";

export interface ReplayRoutesOptions {
  register: EventRegister;
  now: () => number;
}

/**
 * Replays, operators and admins only. Each takes two POSTs: the first shows
 * what will happen (a confirmation page, or the bulk dry run) and changes
 * nothing; the second does it, through the same operation as the admin API.
 */
export async function replayRoutes(app: FastifyInstance, options: ReplayRoutesOptions): Promise<void> {
  const { register, now } = options;
  const replayOne = { schema: { hide: true }, onRequest: requireConsoleAction("events.replay") };
  const replayBulk = { schema: { hide: true }, onRequest: requireConsoleAction("events.replay-bulk") };

  app.post("/events/:sender/:eventId/replay", replayOne, async (request, reply) => {
    const key = eventKeyOf(request.params);
    const fields = replayRequestOf(formOf(request));
    const lookup = await lookUpEvent(register, key.eventId, key.sender);
    if (lookup.kind !== "found") throw notFound();
    return sendPage(reply, 200, replayConfirmationPage(signedInOf(request), lookup.record, fields));
  });

  app.post("/events/:sender/:eventId/replay/confirm", replayOne, async (request, reply) => {
    const { sender, eventId } = eventKeyOf(request.params);
    const { reason, force } = replayRequestOf(formOf(request));
    const requestedBy = signedInOf(request).principal.name;
    const outcome = await replayEvent(register, { eventId, sender, requestedBy, reason, force, now: now() });
    const eventPath = consolePaths.event(sender, eventId);
    switch (outcome.kind) {
      case "replayed":
        request.log.warn(
          { event_id: eventId, sender, from_status: outcome.fromStatus, requested_by: requestedBy, reason },
          "event replayed",
        );
        return reply.redirect(withQuery(eventPath, { replayed: "1" }), 303);
      case "refused":
        throw new ConsoleError(
          409,
          "Not replayed",
          outcome.reason === "succeeded"
            ? "the event already SUCCEEDED; to send it again anyway, tick “Send again although it SUCCEEDED”"
            : "an attempt for this event is running now; replay it after it ends",
          { link: { href: eventPath, text: "Back to the event" } },
        );
      default:
        throw notFound();
    }
  });

  app.get("/bulk-replay", replayBulk, async (request, reply) =>
    sendPage(reply, 200, bulkReplayFormPage(signedInOf(request))),
  );

  app.post("/bulk-replay/preview", replayBulk, async (request, reply) => {
    const form = formOf(request);
    const selection = bulkSelectionOf(form);
    const reason = reasonOf(form);
    const records = await previewBulkReplay(register, selection);
    return sendPage(reply, 200, bulkReplayPreviewPage(signedInOf(request), selection, reason, records));
  });

  app.post("/bulk-replay/confirm", replayBulk, async (request, reply) => {
    const form = formOf(request);
    const keys = previewedEventsOf(form);
    const reason = reasonOf(form);
    const requestedBy = signedInOf(request).principal.name;
    const lines = await replayEach(register, keys, { requestedBy, reason, now });
    request.log.warn(
      {
        requested_by: requestedBy,
        reason,
        events: lines.length,
        replayed: lines.filter((l) => l.outcome === "replayed").length,
      },
      "events replayed in bulk",
    );
    return sendPage(reply, 200, bulkReplayResultPage(signedInOf(request), lines));
  });
}
