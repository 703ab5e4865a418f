import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaCompiler } from "fastify";
import type { AcceptResult } from "../../accept/accept-result.ts";
import type { OrderPaidAcceptor } from "../../accept/order-paid-acceptor.ts";
import { OrderPaidIntake } from "../../accept/order-paid-intake.ts";
import type { SenderEntry } from "../../config/senders.ts";
import { ORDERS_PAID_PATH } from "../../domain/first-answer.ts";
import { isValidEventId } from "../../domain/order-paid.ts";
import type { GatewayMetrics } from "../../observability/metrics.ts";
import type { EventRegister } from "../../register/port.ts";
import { attemptView, statusView } from "../../views/event-views.ts";
import { answerFor, JSON_CONTENT_TYPE, problemAnswer } from "../answers.ts";
import { headersProblem, MAYBE_JSON } from "../json-body.ts";
import { problemCodeFor, sendAnswer } from "../problem-handler.ts";
import { authenticateSender } from "../sender-auth.ts";
import { limitSenderRate } from "../sender-rate-limit.ts";
import {
  EVENT_PATH,
  getOrderPaidStatusSchema,
  listOrderPaidAttemptsSchema,
  ORDER_PAID_LINKS,
  postOrderPaidSchema,
} from "./order-paid-schemas.ts";

export interface OrderPaidRoutesOptions {
  acceptor: OrderPaidAcceptor;
  register: EventRegister;
  now: () => number;
  senders: readonly SenderEntry[];
  /** Requests without a token are taken, as the sender `default` (ALLOW_ANONYMOUS with no senders). */
  anonymous: boolean;
  rateLimit: { max: number; windowMs: number };
  metrics: GatewayMetrics;
  /** The same limit as the root's JSON parser: this route reads its bytes itself. */
  bodyLimit: number;
  /** Reads the bodies; one per server, so the bodies it remembers are this process's. */
  intake?: OrderPaidIntake;
}

/**
 * The POST route's schema documents the body and headers but validates
 * neither: the intake reads the bytes (UTF-8, the strict parse: repeated
 * keys, decimal integers), then admitOrderPaid checks event_id,
 * Idempotency-Key, the schema and the business rules in that order, each
 * with its own problem code. Fastify's validator would answer first, with a
 * bare 400.
 */
const documentedOnly: FastifySchemaCompiler<unknown> = () => () => true;

function countAnswer(metrics: GatewayMetrics, sender: string, result: AcceptResult, status: number): void {
  if (result.kind === "conflict") metrics.conflict(sender);
  else if (result.firstAnswer) metrics.accepted(sender);
  else metrics.replayed(sender, status);
}

/** The senders' routes: each request authenticated, rate-limited and scoped to its sender. */
export async function orderPaidRoutes(app: FastifyInstance, options: OrderPaidRoutesOptions): Promise<void> {
  const { acceptor, register, now, metrics } = options;
  const intake = options.intake ?? new OrderPaidIntake();

  // The body's bytes go to the intake as they came: a repeat is recognised by
  // their digest before anything parses them. The media type is checked here
  // as the root's parser checks it, with the same answers.
  app.removeContentTypeParser(MAYBE_JSON);
  app.addContentTypeParser(MAYBE_JSON, { parseAs: "buffer", bodyLimit: options.bodyLimit }, (request, raw, done) => {
    const refusal = headersProblem(request);
    if (refusal === undefined) done(null, raw);
    else done(refusal);
  });

  app.addHook(
    "onRequest",
    authenticateSender(
      options.senders,
      // The metric counts refused events: a status poll with a wrong token is no event.
      (request) => {
        if (request.method === "POST") metrics.rejected("-", "GW_ERR_UNAUTHORIZED");
      },
      options.anonymous,
    ),
  );
  // Refusals that leave through the error handler: unreadable bodies, rate limit, storage down.
  app.addHook("onError", async (request, _reply, error) => {
    if (request.method === "POST") metrics.rejected(request.sender, problemCodeFor(error));
  });
  await limitSenderRate(app, options.rateLimit, register.hitCounter);

  const routes = app.withTypeProvider<TypeBoxTypeProvider>();

  routes.post(
    ORDERS_PAID_PATH,
    { schema: postOrderPaidSchema, validatorCompiler: documentedOnly, links: ORDER_PAID_LINKS },
    async (request, reply) => {
      const raw: unknown = request.body;
      if (!Buffer.isBuffer(raw)) {
        metrics.rejected(request.sender, "GW_ERR_UNSUPPORTED_MEDIA_TYPE");
        return sendAnswer(
          reply,
          problemAnswer("GW_ERR_UNSUPPORTED_MEDIA_TYPE", request.id, {
            detail: "send the event as a JSON body with Content-Type: application/json",
          }),
        );
      }
      const admission = intake.admit(raw, request.headers["idempotency-key"]);
      if (!admission.ok) {
        request.logEvent = admission.eventId === undefined ? undefined : { eventId: admission.eventId };
        metrics.rejected(request.sender, admission.code);
        const extras = admission.errors === undefined ? {} : { errors: admission.errors };
        const eventId = admission.eventId === undefined ? {} : { event_id: admission.eventId };
        return sendAnswer(
          reply,
          problemAnswer(admission.code, request.id, { detail: admission.detail, ...extras, ...eventId }),
        );
      }
      const { eventId } = admission;
      const result = await acceptor.accept({
        sender: request.sender,
        eventId,
        canonical: admission.canonical,
        siteOrder: admission.siteOrder,
        correlationId: request.id,
        traceContext: request.trace?.context,
        recognised: admission.recognised,
      });
      // Retry-After is a difference with the record's times: on the clock they were stamped with.
      const answer = answerFor(result, request.id, register.clockNow?.() ?? now());
      countAnswer(metrics, request.sender, result, answer.status);
      request.logEvent = { eventId, eventStatus: result.record.status };
      return sendAnswer(reply, answer);
    },
  );

  const findOr404 = async (request: FastifyRequest<{ Params: { event_id: string } }>, reply: FastifyReply) => {
    const eventId = request.params.event_id;
    // Another sender's event is as unknown as a missing one.
    const record = isValidEventId(eventId) ? await register.find(request.sender, eventId) : undefined;
    if (record === undefined) {
      sendAnswer(
        reply,
        problemAnswer("GW_ERR_NOT_FOUND", request.id, { detail: `no event with event_id "${eventId}"` }),
      );
    }
    return record;
  };

  routes.get(EVENT_PATH, { schema: getOrderPaidStatusSchema }, async (request, reply) => {
    const record = await findOr404(request, reply);
    if (record === undefined) return reply;
    return reply
      .header("cache-control", "no-store")
      .type(JSON_CONTENT_TYPE)
      .send(JSON.stringify(statusView(record)));
  });

  routes.get(`${EVENT_PATH}/attempts`, { schema: listOrderPaidAttemptsSchema }, async (request, reply) => {
    const record = await findOr404(request, reply);
    if (record === undefined) return reply;
    const attempts = await register.listAttempts(record.sender, record.eventId);
    const view = { event_id: record.eventId, status: record.status, attempts: attempts.map(attemptView) };
    return reply.header("cache-control", "no-store").type(JSON_CONTENT_TYPE).send(JSON.stringify(view));
  });
}
