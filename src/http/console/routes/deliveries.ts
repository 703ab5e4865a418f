import type { FastifyInstance } from "fastify";
import { type PlatformWebhooks, REMAP_ACTION, remapDelivery } from "../../../operations/remap-delivery.ts";
import { REPLAY_REASON_MAX } from "../../../operations/replay-event.ts";
import type { EventRegister } from "../../../register/port.ts";
import { ConsoleError } from "../console-error.ts";
import { loadDelivery, loadDeliveryList } from "../console-reads.ts";
import { deliveryIdOf, parseDeliveryQuery } from "../delivery-query.ts";
import { type FormFields, formOf } from "../form-body.ts";
import { consolePaths, withQuery } from "../paths.ts";
import { notFound, requireConsoleAction, sendPage, signedInOf } from "../requests.ts";
import { deliveryListPage, deliveryPage } from "../views/delivery-pages.ts";

export interface DeliveryRoutesOptions {
  register: EventRegister;
  webhooks: PlatformWebhooks;
}

const NO_DELIVERY = "There is no such platform delivery";

/**
 * The platforms' kept deliveries: every role reads them; mapping an unmapped
 * one again is for whoever may replay, through the same operation as the
 * admin API.
 */
export async function deliveryRoutes(app: FastifyInstance, options: DeliveryRoutesOptions): Promise<void> {
  const { register, webhooks } = options;
  const read = { schema: { hide: true }, onRequest: requireConsoleAction("events.read") };
  const remap = { schema: { hide: true }, onRequest: requireConsoleAction(REMAP_ACTION) };

  app.get("/webhook-deliveries", read, async (request, reply) => {
    const data = await loadDeliveryList(register, parseDeliveryQuery(request.query));
    return sendPage(reply, 200, deliveryListPage(signedInOf(request), data));
  });

  app.get("/webhook-deliveries/:id", read, async (request, reply) => {
    const id = deliveryIdOf(request.params);
    const user = signedInOf(request);
    const seen = id === undefined ? undefined : await loadDelivery(register, id, user.principal);
    if (seen === undefined) throw notFound(NO_DELIVERY);
    const query = request.query as { remapped?: unknown };
    return sendPage(reply, 200, deliveryPage(user, seen, { kind: query.remapped === "1" ? "remapped" : "none" }));
  });

  app.post("/webhook-deliveries/:id/remap", remap, async (request, reply) => {
    const id = deliveryIdOf(request.params);
    if (id === undefined) throw notFound(NO_DELIVERY);
    const reason = remapReasonOf(formOf(request));
    const user = signedInOf(request);
    const by = user.principal;
    const outcome = await remapDelivery(register.sources, webhooks, { id, by, reason, correlationId: request.id });
    const deliveryPath = consolePaths.delivery(id);
    switch (outcome.kind) {
      case "mapped": {
        const { record } = outcome;
        request.logEvent = { eventId: record.eventId, eventStatus: record.status };
        request.log.warn(
          { delivery_id: id, sender: record.sender, event_id: record.eventId, requested_by: by.name, reason },
          "delivery remapped",
        );
        return reply.redirect(withQuery(deliveryPath, { remapped: "1" }), 303);
      }
      case "unmapped": {
        request.log.info(
          { delivery_id: id, sender: outcome.delivery.sender, requested_by: by.name, reason, still: outcome.reason },
          "delivery still unmapped",
        );
        const seen = await loadDelivery(register, id, by);
        if (seen === undefined) throw notFound(NO_DELIVERY);
        return sendPage(reply, 422, deliveryPage(user, seen, { kind: "still-unmapped", reason: outcome.reason }));
      }
      case "refused":
        throw new ConsoleError(409, "Not mapped again", outcome.detail, {
          link: { href: deliveryPath, text: "Back to the delivery" },
        });
      case "forbidden":
        throw new ConsoleError(403, "Not allowed", outcome.detail);
      case "missing":
        throw notFound(NO_DELIVERY);
    }
  });
}

/** The audit's reason, as for a replay: required, kept as written (trimmed). */
function remapReasonOf(form: FormFields): string {
  const reason = (form.get("reason") ?? "").trim();
  if (reason === "") throw new ConsoleError(400, "Check the form", "say why it is mapped again: what was fixed");
  if (reason.length > REPLAY_REASON_MAX) {
    throw new ConsoleError(400, "Check the form", `a reason has at most ${REPLAY_REASON_MAX} characters`);
  }
  return reason;
}
