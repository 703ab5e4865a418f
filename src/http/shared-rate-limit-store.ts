import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from "@fastify/rate-limit";
import type { HitCounter } from "../register/port.ts";

type IncrCallback = Parameters<FastifyRateLimitStore["incr"]>[1];

/**
 * @fastify/rate-limit's store over the register's shared HitCounter: every
 * instance counts a sender's requests into one window, so the limit holds
 * for the sender, not per instance behind the load balancer.
 */
export function sharedRateLimitStore(counter: HitCounter): FastifyRateLimitStoreCtor {
  class SharedRateLimitStore implements FastifyRateLimitStore {
    incr(key: string, callback: IncrCallback, timeWindow: number): void {
      counter.hit(key, timeWindow).then(
        ({ hits, resetInMs }) => callback(null, { current: hits, ttl: resetInMs }),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    }

    /** One limit for all the senders' routes, as with the plugin's local store. */
    child(): FastifyRateLimitStore {
      return this;
    }
  }
  return SharedRateLimitStore;
}
