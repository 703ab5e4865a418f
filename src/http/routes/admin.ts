import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Static } from "typebox";
import type { OperatorEntry } from "../../config/operators.ts";
import { statusUrl } from "../../domain/first-answer.ts";
import { isValidEventId } from "../../domain/order-paid.ts";
import { eventForReader, recordsForReader } from "../../operations/event-for-reader.ts";
import { lookUpEvent } from "../../operations/look-up-event.ts";
import type { PlatformWebhooks } from "../../operations/remap-delivery.ts";
import { replayEvent } from "../../operations/replay-event.ts";
import type { EventRecord, EventRegister, PageCursor } from "../../register/port.ts";
import { attemptView, iso, replayView, statusView } from "../../views/event-views.ts";
import { authenticateOperators, principalOfRequest, requireAction } from "../admin-auth.ts";
import { JSON_CONTENT_TYPE, problemAnswer } from "../answers.ts";
import { sendAnswer } from "../problem-handler.ts";
import {
  ADMIN_ACTIONS,
  getEventSchema,
  listEventsSchema,
  replayEventSchema,
  type SenderQuery,
} from "./admin-schemas.ts";
import { deliveryRoutes } from "./admin-webhooks.ts";

export const ADMIN_PATH = "/integration/v1/admin";

export interface AdminRoutesOptions {
  register: EventRegister;
  /** Everyone who may call these routes, each with a role (OPERATORS_FILE and ADMIN_TOKEN). */
  operators: readonly OperatorEntry[];
  /** The platforms' intake and settings: the platform deliveries' routes (admin-webhooks.ts) remap with them. */
  webhooks: PlatformWebhooks;
  now: () => number;
}

/** Support staff's and 1C administrators' routes. Registered only when someone may use them. */
export async function adminRoutes(app: FastifyInstance, options: AdminRoutesOptions): Promise<void> {
  const { register, now } = options;
  authenticateOperators(app, options.operators);

  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const list = { schema: listEventsSchema, onRequest: requireAction(ADMIN_ACTIONS.listEvents) };
  routes.get(`${ADMIN_PATH}/events`, list, async (request, reply) => {
    const { status, sender, since, until, cursor } = request.query;
    const limit = Number(request.query.limit ?? 50);
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    if (cursor !== undefined && before === undefined) {
      return sendAnswer(reply, problemAnswer("GW_ERR_BAD_REQUEST", request.id, { detail: "cursor is not valid" }));
    }
    const records = await register.page({
      limit,
      ...(status === undefined ? {} : { status }),
      ...(sender === undefined ? {} : { sender }),
      ...(since === undefined ? {} : { since: Date.parse(since) }),
      ...(until === undefined ? {} : { until: Date.parse(until) }),
      ...(before === undefined ? {} : { before }),
    });
    const last = records.at(-1);
    const page = {
      events: recordsForReader(records, principalOfRequest(request)).map((record) => ({
        sender: record.sender,
        ...statusView(record),
      })),
      next_cursor: records.length === limit && last !== undefined ? encodeCursor(last) : null,
    };
    return reply.header("cache-control", "no-store").type(JSON_CONTENT_TYPE).send(JSON.stringify(page));
  });

  const getOne = { schema: getEventSchema, onRequest: requireAction(ADMIN_ACTIONS.getEvent) };
  routes.get(`${ADMIN_PATH}/events/:event_id`, getOne, async (request, reply) => {
    const found = await resolveEvent(request, reply, register);
    if (found === undefined) return reply;
    const [allAttempts, replays] = await Promise.all([
      register.listAttempts(found.sender, found.eventId),
      register.listReplays(found.sender, found.eventId),
    ]);
    const { record, attempts, body } = eventForReader(found, allAttempts, principalOfRequest(request));
    const detail = {
      sender: record.sender,
      ...statusView(record),
      status_url: statusUrl(record.eventId),
      body,
      fingerprint: record.fingerprint,
      policy_version: record.policyVersion,
      lease: record.leaseUntil === null ? null : { owner: record.leaseOwner, until: iso(record.leaseUntil) },
      response: record.response,
      attempts: attempts.map(attemptView),
      replays: replays.map(replayView),
    };
    return reply.header("cache-control", "no-store").type(JSON_CONTENT_TYPE).send(JSON.stringify(detail));
  });

  const replay = { schema: replayEventSchema, onRequest: requireAction(ADMIN_ACTIONS.replayEvent) };
  routes.post(`${ADMIN_PATH}/events/:event_id/replay`, replay, async (request, reply) => {
    const eventId = request.params.event_id;
    if (!isValidEventId(eventId)) return notFound(request, reply, eventId);
    // The audit names whoever the token belongs to: a name in the body cannot stand in for it.
    const requestedBy = principalOfRequest(request).name;
    const claimed = request.body.requested_by;
    if (claimed !== undefined && claimed !== requestedBy) {
      request.log.warn({ event_id: eventId, requested_by: requestedBy, claimed }, "requested_by in the body ignored");
    }
    const outcome = await replayEvent(register, {
      eventId,
      sender: request.query.sender,
      requestedBy,
      reason: request.body.reason,
      force: request.body.force ?? false,
      now: now(),
    });
    switch (outcome.kind) {
      case "missing":
        return notFound(request, reply, eventId);
      case "ambiguous":
        return ambiguous(request, reply, eventId, outcome.senders);
      case "refused": {
        const detail =
          outcome.reason === "succeeded"
            ? `event "${eventId}" already SUCCEEDED; send {"force": true} to deliver the same bytes again (1C answers with the order it has)`
            : `an attempt for event "${eventId}" is running now; replay it after it ends`;
        return sendAnswer(
          reply,
          problemAnswer("GW_ERR_REPLAY_REFUSED", request.id, {
            detail,
            event_id: eventId,
            status_url: statusUrl(eventId),
          }),
        );
      }
      case "replayed":
        break;
    }
    const { record } = outcome;
    request.log.warn(
      {
        event_id: eventId,
        sender: record.sender,
        from_status: outcome.fromStatus,
        requested_by: requestedBy,
        reason: request.body.reason,
      },
      "event replayed",
    );
    const view = {
      sender: record.sender,
      ...statusView(record),
      replayed_from: outcome.fromStatus,
      status_url: statusUrl(eventId),
    };
    return reply.code(202).header("location", statusUrl(eventId)).type(JSON_CONTENT_TYPE).send(JSON.stringify(view));
  });

  deliveryRoutes(app, { register, webhooks: options.webhooks });
}

/**
 * Support staff know an event by its id alone. One sender's event is found
 * directly; when several senders used the id, `?sender=` picks one (409 otherwise).
 */
async function resolveEvent(
  request: FastifyRequest<{ Params: { event_id: string }; Querystring: Static<typeof SenderQuery> }>,
  reply: FastifyReply,
  register: EventRegister,
): Promise<EventRecord | undefined> {
  const eventId = request.params.event_id;
  if (!isValidEventId(eventId)) {
    notFound(request, reply, eventId);
    return undefined;
  }
  const lookup = await lookUpEvent(register, eventId, request.query.sender);
  if (lookup.kind === "found") return lookup.record;
  if (lookup.kind === "missing") {
    notFound(request, reply, eventId);
    return undefined;
  }
  ambiguous(request, reply, eventId, lookup.senders);
  return undefined;
}

function ambiguous(request: FastifyRequest, reply: FastifyReply, eventId: string, senders: string[]): FastifyReply {
  return sendAnswer(
    reply,
    problemAnswer("GW_ERR_AMBIGUOUS_EVENT", request.id, {
      detail: `senders ${senders.map((s) => `"${s}"`).join(", ")} each sent an event "${eventId}"; add ?sender=<one of them>`,
      event_id: eventId,
    }),
  );
}

function notFound(request: FastifyRequest, reply: FastifyReply, eventId: string): FastifyReply {
  return sendAnswer(
    reply,
    problemAnswer("GW_ERR_NOT_FOUND", request.id, { detail: `no event with event_id "${eventId}"` }),
  );
}

function encodeCursor(record: EventRecord): string {
  return Buffer.from(JSON.stringify([record.receivedAt, record.sender, record.eventId]), "utf8").toString("base64url");
}

function decodeCursor(cursor: string): PageCursor | undefined {
  try {
    const [receivedAt, sender, eventId] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (typeof receivedAt !== "number" || typeof sender !== "string" || typeof eventId !== "string") return undefined;
    return { receivedAt, sender, eventId };
  } catch {
    return undefined;
  }
}
