import type { FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import { type SenderEntry, senderOf } from "../config/senders.ts";
import { DEFAULT_SENDER } from "../register/senders.ts";
import { problemAnswer } from "./answers.ts";
import { throttledAnswer } from "./auth-throttle.ts";
import { sendAnswer } from "./problem-handler.ts";

// Where the senders' API has always offered it; it lives with the senders' configuration.
export { senderOf } from "../config/senders.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The authenticated sender; every event and status lookup is scoped to it. */
    sender: string;
  }
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = typeof header === "string" ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
  return match?.[1];
}

/**
 * An onRequest hook: runs before the body is read, so an unauthenticated
 * request costs no parsing and records nothing. Tokens are never logged. A
 * wrong token is counted by the auth throttle (a missing one guesses nothing):
 * over its limit the answer is 429, not 401.
 */
export function authenticateSender(
  senders: readonly SenderEntry[],
  onRefused: (request: FastifyRequest) => void = () => {},
  anonymous = senders.length === 0,
): onRequestHookHandler {
  // Callback style: the request that authenticates, nearly every one, goes on without a promise.
  return (request, reply, done) => {
    if (anonymous) {
      request.sender = DEFAULT_SENDER;
      done();
      return;
    }
    const token = bearerToken(request);
    const sender = token === undefined ? undefined : senderOf(token, senders);
    if (sender !== undefined) {
      request.sender = sender;
      done();
      return;
    }
    // Answered by refuse, so `done` is called only if refusing fails.
    refuse(request, reply, token, onRefused).catch(done);
  };
}

async function refuse(
  request: FastifyRequest,
  reply: FastifyReply,
  token: string | undefined,
  onRefused: (request: FastifyRequest) => void,
): Promise<void> {
  onRefused(request);
  const wait = token === undefined ? undefined : await request.server.authThrottle.failed(request, "sender", token);
  if (wait !== undefined) {
    sendAnswer(reply, throttledAnswer(request, wait));
    return;
  }
  reply.header("www-authenticate", 'Bearer realm="order-gateway"');
  sendAnswer(
    reply,
    problemAnswer("GW_ERR_UNAUTHORIZED", request.id, {
      detail:
        token === undefined
          ? "send Authorization: Bearer <your sender token>"
          : "the token is not valid for any sender; nothing was recorded",
    }),
  );
}
