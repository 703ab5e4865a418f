import type { FastifyReply, FastifyRequest } from "fastify";
import { SENDER_ID_PATTERN } from "../../config/senders.ts";
import { isValidEventId } from "../../domain/order-paid.ts";
import { type Action, allowed, refusal } from "../../operations/authorization.ts";
import type { EventKey } from "./bulk-replay.ts";
import { ConsoleError } from "./console-error.ts";
import type { Html } from "./html.ts";
import type { SignedIn } from "./sessions.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Who is signed in to the console: set by the session hook of the signed-in routes. */
    consoleUser: SignedIn | undefined;
  }
}

/** The person behind a signed-in route. */
export function signedInOf(request: FastifyRequest): SignedIn {
  if (request.consoleUser === undefined) throw new Error("a signed-in console route ran without the session hook");
  return request.consoleUser;
}

/**
 * A route's own onRequest hook: a role without the right gets 403 before the
 * body is read, so a viewer's replay is refused whatever it sent.
 */
export function requireConsoleAction(action: Action) {
  return async (request: FastifyRequest): Promise<void> => {
    const { principal } = signedInOf(request);
    if (!allowed(principal.role, action)) throw new ConsoleError(403, "Not allowed", refusal(principal, action));
  };
}

export function sendPage(reply: FastifyReply, status: number, body: Html): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(body.toString());
}

/** The event a console URL names; a sender or event_id that cannot exist is simply not found. */
export function eventKeyOf(params: unknown): EventKey {
  const { sender, eventId } = (params ?? {}) as { sender?: unknown; eventId?: unknown };
  if (typeof sender !== "string" || !SENDER_ID_PATTERN.test(sender) || !isValidEventId(eventId)) {
    throw notFound();
  }
  return { sender, eventId };
}

export function notFound(what = "There is no such event"): ConsoleError {
  return new ConsoleError(
    404,
    "Not found",
    `${what}. It may have been purged after RETENTION_HOURS, or the link is wrong`,
  );
}
