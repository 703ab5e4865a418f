import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
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
    errorResponseBuilder: (request, context) =>
      new GatewayProblem(
        "GW_ERR_RATE_LIMITED",
        `more than ${context.max} requests in ${Math.round(limit.windowMs / 1000)} s from sender "${request.sender}"; retry after ${context.after}`,
      ),
  });
}
