import { type FastifyReply, type FastifyRequest, LogController } from "fastify";

declare module "fastify" {
  interface FastifyRequest {
    /** Set by handlers that know it, for the request's one log line. */
    logEvent: { eventId?: string; eventStatus?: string } | undefined;
  }
}

/**
 * One line per request instead of Fastify's two: pino is fast because it
 * writes little. That line carries the correlation id, the sender, the event
 * and the answer, so a request is found by any of them.
 */
export class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: "correlation_id" });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const fields = {
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      sender: request.sender,
      event_id: request.logEvent?.eventId,
      event_status: request.logEvent?.eventStatus,
    };
    if (error) reply.log.error({ ...fields, err: error }, "request errored");
    else reply.log.info(fields, "request completed");
  }
}
