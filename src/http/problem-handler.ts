import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { ProblemCode } from "../errors/catalogue.ts";
import { GatewayProblem } from "../errors/problem.ts";
import { StorageUnavailableError } from "../register/port.ts";
import { type Answer, problemAnswer } from "./answers.ts";
import type { AnsweredOutside } from "./client-error.ts";
import { CORRELATION_HEADER } from "./correlation.ts";
import { unsupportedBodyProblem } from "./json-body.ts";
import { withoutUrlSecret } from "./request-log.ts";
import { setTransportHeaders } from "./security-headers.ts";

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
async function problemHandler(app: FastifyInstance): Promise<void> {
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

/** Wrapped with fastify-plugin: the handlers must be the root's, not a child context's. */
export const problemAnswers = fp(problemHandler, { name: "problem-answers", fastify: "5.x" });

/** Which catalogue entry an error leaving a handler stands for. */
export function problemCodeFor(error: Error): ProblemCode {
  if (error instanceof GatewayProblem) return error.code;
  if (error instanceof StorageUnavailableError) return "GW_ERR_STORAGE_UNAVAILABLE";
  const fastifyCode = (error as FastifyError).code;
  const mapped = fastifyCode === undefined ? undefined : FASTIFY_CODES[fastifyCode];
  if (mapped !== undefined) return mapped;
  const statusCode = (error as FastifyError).statusCode;
  return statusCode !== undefined && statusCode >= 400 && statusCode < 500 ? "GW_ERR_BAD_REQUEST" : "GW_ERR_INTERNAL";
}

/**
 * Fastify's `frameworkErrors`: the router's refusals (a malformed % escape, a
 * path segment over the router's maxParamLength) answered before any hook
 * runs, so the correlation id and the request's log line are set here too.
 */
export function frameworkErrorHandler(maxParamLength: number, answered: AnsweredOutside) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.header(CORRELATION_HEADER, request.id);
    setTransportHeaders(request, reply);
    const answer = routerRefusal(error, request, maxParamLength);
    if (answer.status >= 500) request.log.error({ err: error }, "request failed");
    sendAnswer(reply, answer);
    // This path skips the hooks that count an answer and log its line: both done here, with the same fields.
    answered(answer.status);
    request.log.info(
      { method: request.method, url: withoutUrlSecret(request.url), status: answer.status },
      "request completed",
    );
  };
}

function routerRefusal(error: FastifyError, request: FastifyRequest, maxParamLength: number): Answer {
  switch (error.code) {
    case "FST_ERR_BAD_URL":
      return problemAnswer("GW_ERR_BAD_REQUEST", request.id, {
        detail: "the URL has a malformed % escape; percent-encode each byte as %XX",
      });
    case "FST_ERR_MAX_PARAM_LENGTH":
      return problemAnswer("GW_ERR_URI_TOO_LONG", request.id, {
        detail: `a path segment is longer than ${maxParamLength} characters; an event_id has at most 128`,
      });
    default:
      return answerForError(error, request);
  }
}

function answerForError(error: Error, request: FastifyRequest): Answer {
  const correlationId = request.id;
  // Fastify refused a Content-Type it could not parse: say what we need instead of its bare message.
  const problem =
    (error as FastifyError).code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" ? unsupportedBodyProblem(request) : error;
  if (problem instanceof GatewayProblem) {
    return problemAnswer(problem.code, correlationId, { detail: problem.detail, ...problem.extras });
  }
  const code = problemCodeFor(error);
  switch (code) {
    case "GW_ERR_STORAGE_UNAVAILABLE":
      return problemAnswer(code, correlationId, {
        detail: "the event register is unavailable; nothing was recorded, retry with the same event_id",
        retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS,
      });
    case "GW_ERR_INTERNAL":
      return problemAnswer(code, correlationId, {
        detail: "an unexpected error; it is logged under this correlation_id",
      });
    case "GW_ERR_BODY_TOO_LARGE":
      return problemAnswer(code, correlationId, {
        detail: `the body is larger than this route's limit of ${request.routeOptions.bodyLimit} bytes; nothing was recorded`,
      });
    default:
      return problemAnswer(code, correlationId, { detail: error.message });
  }
}
