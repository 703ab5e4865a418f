import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { statusUrl } from "../../domain/first-answer.ts";
import { deliveryForReader, type PlatformWebhooks, remapDelivery } from "../../operations/remap-delivery.ts";
import type { EventRegister } from "../../register/port.ts";
import { principalOfRequest, requireAction } from "../admin-auth.ts";
import { JSON_CONTENT_TYPE, problemAnswer } from "../answers.ts";
import { sendAnswer } from "../problem-handler.ts";
import {
  DEFAULT_DELIVERY_LIMIT,
  DELIVERY_ACTIONS,
  getDeliverySchema,
  listDeliveriesSchema,
  remapDeliverySchema,
} from "./admin-webhook-schemas.ts";
import { deliveryDetailView, deliveryView, remappedView } from "./admin-webhook-views.ts";

export const DELIVERIES_PATH = "/integration/v1/admin/webhook-deliveries";

export interface DeliveryRoutesOptions {
  register: EventRegister;
  webhooks: PlatformWebhooks;
}

/**
 * The platforms' kept deliveries, for support: the list, one with its
 * payload, and mapping an unmapped one again. Added to the admin routes'
 * context, behind its authentication; each route says what it does.
 */
export function deliveryRoutes(app: FastifyInstance, options: DeliveryRoutesOptions): void {
  const { register, webhooks } = options;
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();

  const list = { schema: listDeliveriesSchema, onRequest: requireAction(DELIVERY_ACTIONS.listDeliveries) };
  routes.get(DELIVERIES_PATH, list, async (request, reply) => {
    const { sender, platform, outcome, before_id: beforeId } = request.query;
    const limit = Number(request.query.limit ?? DEFAULT_DELIVERY_LIMIT);
    const deliveries = await register.sources.list({
      limit,
      ...(sender === undefined ? {} : { sender }),
      ...(platform === undefined ? {} : { platform }),
      ...(outcome === undefined ? {} : { outcome }),
      ...(beforeId === undefined ? {} : { beforeId: Number(beforeId) }),
    });
    const last = deliveries.at(-1);
    const page = {
      deliveries: deliveries.map(deliveryView),
      next_before_id: deliveries.length === limit && last !== undefined ? last.id : null,
    };
    return reply.header("cache-control", "no-store").type(JSON_CONTENT_TYPE).send(JSON.stringify(page));
  });

  const getOne = { schema: getDeliverySchema, onRequest: requireAction(DELIVERY_ACTIONS.getDelivery) };
  routes.get(`${DELIVERIES_PATH}/:id`, getOne, async (request, reply) => {
    const id = deliveryIdOf(request.params.id);
    const delivery = id === undefined ? undefined : await register.sources.find(id);
    if (delivery === undefined) return notFound(request, reply, request.params.id);
    const detail = deliveryDetailView(deliveryForReader(delivery, principalOfRequest(request)));
    return reply.header("cache-control", "no-store").type(JSON_CONTENT_TYPE).send(JSON.stringify(detail));
  });

  const remap = { schema: remapDeliverySchema, onRequest: requireAction(DELIVERY_ACTIONS.remapDelivery) };
  routes.post(`${DELIVERIES_PATH}/:id/remap`, remap, async (request, reply) => {
    const id = deliveryIdOf(request.params.id);
    if (id === undefined) return notFound(request, reply, request.params.id);
    const by = principalOfRequest(request);
    const { reason } = request.body;
    const outcome = await remapDelivery(register.sources, webhooks, { id, by, reason, correlationId: request.id });
    switch (outcome.kind) {
      case "missing":
        return notFound(request, reply, request.params.id);
      case "forbidden":
        return sendAnswer(reply, problemAnswer("GW_ERR_FORBIDDEN", request.id, { detail: outcome.detail }));
      case "refused":
        return sendAnswer(
          reply,
          problemAnswer("GW_ERR_REMAP_REFUSED", request.id, {
            detail: outcome.detail,
            ...(outcome.delivery.eventId === null ? {} : { event_id: outcome.delivery.eventId }),
          }),
        );
      case "unmapped":
        request.log.info(
          { delivery_id: id, sender: outcome.delivery.sender, requested_by: by.name, reason, still: outcome.reason },
          "delivery still unmapped",
        );
        return sendAnswer(
          reply,
          problemAnswer("GW_ERR_STILL_UNMAPPED", request.id, {
            detail: `delivery ${id} still does not map: ${outcome.reason}. Fix the sender's settings in SOURCES_FILE, restart, and map it again`,
          }),
        );
      case "mapped":
        break;
    }
    const { record, delivery } = outcome;
    request.logEvent = { eventId: record.eventId, eventStatus: record.status };
    request.log.warn(
      { delivery_id: id, sender: record.sender, event_id: record.eventId, requested_by: by.name, reason },
      "delivery remapped",
    );
    const location = statusUrl(record.eventId);
    return reply
      .code(202)
      .header("location", location)
      .type(JSON_CONTENT_TYPE)
      .send(JSON.stringify(remappedView(delivery, record)));
  });
}

/** The register's ids are positive integers; anything else names no delivery. */
export function deliveryIdOf(text: string): number | undefined {
  return /^[1-9][0-9]{0,14}$/.test(text) ? Number(text) : undefined;
}

function notFound(request: FastifyRequest, reply: FastifyReply, id: string): FastifyReply {
  return sendAnswer(
    reply,
    problemAnswer("GW_ERR_NOT_FOUND", request.id, {
      detail: `no platform delivery with id "${id}"; ignored ones are purged after RETENTION_HOURS`,
    }),
  );
}
