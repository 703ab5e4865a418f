import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Deliverer } from "../../delivery/deliverer.ts";
import { isValidEventId } from "../../domain/order-paid.ts";
import type { EventRegister } from "../../register/port.ts";
import { DEFAULT_SENDER } from "../../register/senders.ts";
import { JSON_CONTENT_TYPE, problemAnswer, statusUrl, statusView } from "../answers.ts";
import { sendAnswer } from "../problem-handler.ts";

export const ADMIN_PATH = "/integration/v1/admin";

export interface AdminRoutesOptions {
  register: EventRegister;
  deliverer: Deliverer;
  adminToken: string;
  now: () => number;
}

interface ReplayBody {
  reason: string;
  force?: boolean;
  requested_by?: string;
}

const replayBodySchema = {
  type: "object",
  additionalProperties: false,
  required: ["reason"],
  properties: {
    reason: { type: "string", minLength: 1, maxLength: 500 },
    force: { type: "boolean" },
    requested_by: { type: "string", minLength: 1, maxLength: 128 },
  },
} as const;

/** Support staff's routes. Registered only when ADMIN_TOKEN is set. */
export async function adminRoutes(app: FastifyInstance, options: AdminRoutesOptions): Promise<void> {
  const { register, deliverer, now } = options;
  const expected = Buffer.from(options.adminToken, "utf8");

  app.addHook("onRequest", async (request, reply) => {
    const header = request.headers.authorization;
    const match = typeof header === "string" ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (match?.[1] === undefined) {
      reply.header("www-authenticate", 'Bearer realm="gateway-admin"');
      return sendAnswer(
        reply,
        problemAnswer("GW_ERR_UNAUTHORIZED", request.id, { detail: "send Authorization: Bearer <ADMIN_TOKEN>" }),
      );
    }
    const given = Buffer.from(match[1], "utf8");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return sendAnswer(reply, problemAnswer("GW_ERR_FORBIDDEN", request.id, { detail: "the token is not valid" }));
    }
  });

  app.post<{ Params: { event_id: string }; Body: ReplayBody }>(
    `${ADMIN_PATH}/events/:event_id/replay`,
    { schema: { body: replayBodySchema } },
    async (request, reply) => {
      const eventId = request.params.event_id;
      if (!isValidEventId(eventId)) return notFound(request, reply, eventId);
      const result = await register.replay({
        sender: DEFAULT_SENDER,
        eventId,
        requestedBy: request.body.requested_by ?? "admin-api",
        reason: request.body.reason,
        force: request.body.force ?? false,
        now: now(),
      });
      if (result.result === "not_found") return notFound(request, reply, eventId);
      if (result.result === "refused") {
        const detail =
          result.reason === "succeeded"
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
      request.log.warn(
        {
          event_id: eventId,
          from_status: result.fromStatus,
          requested_by: request.body.requested_by,
          reason: request.body.reason,
        },
        "event replayed",
      );
      deliverer.expedite(DEFAULT_SENDER, eventId);
      return reply
        .code(202)
        .header("location", statusUrl(eventId))
        .type(JSON_CONTENT_TYPE)
        .send(
          JSON.stringify({
            ...statusView(result.record),
            replayed_from: result.fromStatus,
            status_url: statusUrl(eventId),
          }),
        );
    },
  );
}

function notFound(request: FastifyRequest, reply: FastifyReply, eventId: string) {
  return sendAnswer(
    reply,
    problemAnswer("GW_ERR_NOT_FOUND", request.id, { detail: `no event with event_id "${eventId}"` }),
  );
}
