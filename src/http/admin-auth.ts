import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type OperatorEntry, type Principal, principalOf } from "../config/operators.ts";
import { type Action, allowed, refusal } from "../operations/authorization.ts";
import { problemAnswer } from "./answers.ts";
import { throttledAnswer } from "./auth-throttle.ts";
import { sendAnswer } from "./problem-handler.ts";
import { bearerToken } from "./sender-auth.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Who called an admin route: set before the body is read, read by the handlers and the audit trail. */
    principal: Principal | undefined;
  }
}

/**
 * Every route of `app` (an encapsulated plugin) answers only people: no
 * token 401, a token that is nobody's (a sender's included) 403, both before
 * the body is read; wrong tokens over the auth throttle's limit 429. Each route then says what it does with `requireAction`.
 */
export function authenticateOperators(app: FastifyInstance, operators: readonly OperatorEntry[]): void {
  app.decorateRequest("principal", undefined);
  app.addHook("onRequest", async (request, reply) => {
    const token = bearerToken(request);
    if (token === undefined) {
      reply.header("www-authenticate", 'Bearer realm="gateway-admin"');
      return sendAnswer(
        reply,
        problemAnswer("GW_ERR_UNAUTHORIZED", request.id, {
          detail: "send Authorization: Bearer <your token from OPERATORS_FILE, or ADMIN_TOKEN>",
        }),
      );
    }
    request.principal = principalOf(token, operators);
    if (request.principal === undefined) {
      const wait = await request.server.authThrottle.failed(request, "admin", token);
      if (wait !== undefined) return sendAnswer(reply, throttledAnswer(request, wait));
      return sendAnswer(reply, problemAnswer("GW_ERR_FORBIDDEN", request.id, { detail: "the token is not valid" }));
    }
  });
}

/**
 * A route's own onRequest hook: runs after authentication and before the
 * body is parsed or validated, so a viewer's replay is 403 whatever it sent.
 */
export function requireAction(action: Action) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const who = principalOfRequest(request);
    if (allowed(who.role, action)) return undefined;
    return sendAnswer(reply, problemAnswer("GW_ERR_FORBIDDEN", request.id, { detail: refusal(who, action) }));
  };
}

/** The caller of a route behind `authenticateOperators`. */
export function principalOfRequest(request: FastifyRequest): Principal {
  if (request.principal === undefined) throw new Error("an admin route ran without authenticateOperators");
  return request.principal;
}
