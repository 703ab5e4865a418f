import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { GatewayProblem } from "../errors/problem.ts";
import type { HitCounter } from "../register/port.ts";
import { sharedRateLimitStore } from "./shared-rate-limit-store.ts";

/**
 * RATE_LIMIT_MAX per sender, on the routes of the plugin that calls it (so
 * health, metrics and docs are never counted): the senders' own routes and
 * the platforms' webhooks share one budget per sender. Shared across
 * instances when the register has a counter for it (PostgreSQL). If that
 * counter cannot be reached, the register itself cannot record either and
 * answers 503: the limit steps aside rather than turning an outage into 500s.
 */
export async function limitSenderRate(
  app: FastifyInstance,
  limit: { max: number; windowMs: number },
  counter: HitCounter | undefined,
): Promise<void> {
  if (limit.max <= 0) return;
  await app.register(rateLimit, {
    max: limit.max,
    timeWindow: limit.windowMs,
    hook: "preParsing",
    keyGenerator: (request) => request.sender,
    ...(counter === undefined ? {} : { store: sharedRateLimitStore(counter) }),
    skipOnError: true,
    errorResponseBuilder: (request, context) => overLimit(request, limit, context.after),
  });
}

/** Charges one request to its sender's budget; throws the 429 problem, with Retry-After, when it is spent. */
export type SenderCharge = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * The same budget for the platforms' webhooks, charged by hand once a
 * delivery's signature verified: the sender is named by the URL, which
 * anyone can send to, and forged deliveries counted on arrival would spend
 * the shop's budget and have its real payments refused (a platform then
 * retries, or drops the webhook). Forged ones are bounded by the auth throttle.
 */
export async function verifiedSenderCharge(
  app: FastifyInstance,
  limit: { max: number; windowMs: number },
  counter: HitCounter | undefined,
): Promise<SenderCharge | undefined> {
  // No limit: nothing to charge, and no promise to wait for on every delivery.
  if (limit.max <= 0) return undefined;
  // Limiters made by hand from one registration: the app's own (the auth throttle's, with its store), or this one.
  if (!app.hasDecorator("createRateLimit")) {
    await app.register(rateLimit, {
      global: false,
      skipOnError: true,
      ...(counter === undefined ? {} : { store: sharedRateLimitStore(counter) }),
    });
  }
  const charge = app.createRateLimit({
    max: limit.max,
    timeWindow: limit.windowMs,
    skipOnError: true,
    keyGenerator: (request) => request.sender,
  });
  return async (request, reply) => {
    const result = await charge(request);
    if (result.isAllowed || !result.isExceeded) return;
    const seconds = Math.max(1, result.ttlInSeconds);
    reply.header("retry-after", String(seconds));
    throw overLimit(request, limit, `${seconds} seconds`);
  };
}

function overLimit(request: FastifyRequest, limit: { windowMs: number; max: number }, after: string): GatewayProblem {
  return new GatewayProblem(
    "GW_ERR_RATE_LIMITED",
    `more than ${limit.max} requests in ${Math.round(limit.windowMs / 1000)} s from sender "${request.sender}"; retry after ${after}`,
  );
}
