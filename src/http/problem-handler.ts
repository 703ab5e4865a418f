import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ProblemCode } from "../errors/catalogue.ts";
import { GatewayProblem } from "../errors/problem.ts";
import { StorageUnavailableError } from "../register/port.ts";
import { type Answer, problemAnswer } from "./answers.ts";

/** Fastify's own error codes, translated into ours. */
const FASTIFY_CODES: Readonly<Record<string, ProblemCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: "GW_ERR_BODY_TOO_LARGE",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "GW_ERR_UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "GW_ERR_BAD_REQUEST",
  FST_ERR_CTP_EMPTY_JSON_BODY: "GW_ERR_INVALID_JSON",
  FST_ERR_CTP_INVALID_JSON_BODY: "GW_ERR_INVALID_JSON",
  FST_ERR_VALIDATION: "GW_ERR_BAD_REQUEST",
};

export const STORAGE_RETRY_AFTER_SECONDS = 2;

export function sendAnswer(reply: FastifyReply, answer: Answer): FastifyReply {
  return reply.code(answer.status).headers(answer.headers).type(answer.contentType).send(answer.body);
}

/**
 * Every failure leaves as RFC 9457 problem+json with the correlation id.
 * Expected bad input is never a 500; a 500 means a bug and is logged as one.
 */
export function registerProblemHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | GatewayProblem | StorageUnavailableError, request, reply) => {
    const answer = answerForError(error, request);
    if (answer.status >= 500) request.log.error({ err: error }, "request failed");
    return sendAnswer(reply, answer);
  });

  app.setNotFoundHandler((request, reply) =>
    sendAnswer(
      reply,
      problemAnswer("GW_ERR_NOT_FOUND", request.id, { detail: `no route for ${request.method} ${request.url}` }),
    ),
  );
}

function answerForError(error: Error, request: FastifyRequest): Answer {
  const correlationId = request.id;
  if (error instanceof GatewayProblem) {
    return problemAnswer(error.code, correlationId, { detail: error.detail, ...error.extras });
  }
  if (error instanceof StorageUnavailableError) {
    return problemAnswer("GW_ERR_STORAGE_UNAVAILABLE", correlationId, {
      detail: "the event register is unavailable; nothing was recorded, retry with the same event_id",
      retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS,
    });
  }
  const code = (error as FastifyError).code;
  const mapped = code === undefined ? undefined : FASTIFY_CODES[code];
  if (mapped !== undefined) return problemAnswer(mapped, correlationId, { detail: error.message });
  const statusCode = (error as FastifyError).statusCode;
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
    return problemAnswer("GW_ERR_BAD_REQUEST", correlationId, { detail: error.message });
  }
  return problemAnswer("GW_ERR_INTERNAL", correlationId, {
    detail: "an unexpected error; it is logged under this correlation_id",
  });
}
