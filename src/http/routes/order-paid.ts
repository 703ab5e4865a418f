import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { admitOrderPaid } from "../../accept/admit-order-paid.ts";
import type { OrderPaidAcceptor } from "../../accept/order-paid-acceptor.ts";
import { isValidEventId } from "../../domain/order-paid.ts";
import type { EventRegister } from "../../register/port.ts";
import { DEFAULT_SENDER } from "../../register/senders.ts";
import { answerFor, attemptView, JSON_CONTENT_TYPE, ORDERS_PAID_PATH, problemAnswer, statusView } from "../answers.ts";
import { sendAnswer } from "../problem-handler.ts";

export interface OrderPaidRoutesOptions {
  acceptor: OrderPaidAcceptor;
  register: EventRegister;
  now: () => number;
}

export async function orderPaidRoutes(app: FastifyInstance, options: OrderPaidRoutesOptions): Promise<void> {
  const { acceptor, register, now } = options;

  app.post(ORDERS_PAID_PATH, async (request, reply) => {
    if (request.body === undefined) {
      return sendAnswer(
        reply,
        problemAnswer("GW_ERR_UNSUPPORTED_MEDIA_TYPE", request.id, {
          detail: "send the event as a JSON body with Content-Type: application/json",
        }),
      );
    }
    const admission = admitOrderPaid(request.body, request.headers["idempotency-key"]);
    if (!admission.ok) {
      request.log.info({ event_id: admission.eventId, problem: admission.code }, "event refused before recording");
      const extras = admission.errors === undefined ? {} : { errors: admission.errors };
      const eventId = admission.eventId === undefined ? {} : { event_id: admission.eventId };
      return sendAnswer(
        reply,
        problemAnswer(admission.code, request.id, { detail: admission.detail, ...extras, ...eventId }),
      );
    }
    const eventId = admission.event.event_id;
    const result = await acceptor.accept({
      sender: DEFAULT_SENDER,
      eventId,
      canonical: admission.canonical,
      correlationId: request.id,
    });
    const answer = answerFor(result, request.id, now());
    request.log.info(
      { event_id: eventId, sender: DEFAULT_SENDER, status: result.record.status, answer: answer.status },
      "order-paid answered",
    );
    return sendAnswer(reply, answer);
  });

  const findOr404 = async (request: FastifyRequest<{ Params: { event_id: string } }>, reply: FastifyReply) => {
    const eventId = request.params.event_id;
    const record = isValidEventId(eventId) ? await register.find(DEFAULT_SENDER, eventId) : undefined;
    if (record === undefined) {
      sendAnswer(
        reply,
        problemAnswer("GW_ERR_NOT_FOUND", request.id, { detail: `no event with event_id "${eventId}"` }),
      );
    }
    return record;
  };

  app.get<{ Params: { event_id: string } }>(`${ORDERS_PAID_PATH}/:event_id`, async (request, reply) => {
    const record = await findOr404(request, reply);
    if (record === undefined) return reply;
    return reply
      .header("cache-control", "no-store")
      .type(JSON_CONTENT_TYPE)
      .send(JSON.stringify(statusView(record)));
  });

  app.get<{ Params: { event_id: string } }>(`${ORDERS_PAID_PATH}/:event_id/attempts`, async (request, reply) => {
    const record = await findOr404(request, reply);
    if (record === undefined) return reply;
    const attempts = await register.listAttempts(record.sender, record.eventId);
    const view = { event_id: record.eventId, status: record.status, attempts: attempts.map(attemptView) };
    return reply.header("cache-control", "no-store").type(JSON_CONTENT_TYPE).send(JSON.stringify(view));
  });
}
