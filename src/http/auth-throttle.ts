import { createHash } from "node:crypto";
import rateLimit, { normalizeIP } from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { HitCounter } from "../register/port.ts";
import { type Answer, problemAnswer } from "./answers.ts";
import { sharedRateLimitStore } from "./shared-rate-limit-store.ts";

/**
 * Failed authentications a client address, and a wrong token, may make in a
 * window before they must wait: the console's sign-in limit, now on every
 * route family. Tokens are 32+ random characters, so guessing is hopeless
 * anyway; the limit bounds the log and CPU a script can spend on attempts.
 * It does not slow the guessing of a weak token: a right token is never
 * refused (issue 22), so every token presented is still checked.
 */
const AUTH_FAILURE_LIMIT = { max: 10, windowMs: 5 * 60_000 } as const;

/** Which door was knocked on: the senders' API, the admin API or the console's sign-in form. */
export type AuthFamily = "sender" | "admin" | "console";

export interface AuthThrottle {
  /**
   * Counts one wrong credential presented by `request`, under the client's
   * address and under the credential itself. Called only after the
   * credential was checked and found wrong: a valid credential is never
   * counted nor refused, so no lock-out can reach its owner. Returns the
   * seconds to wait when either count is over the limit, undefined when the
   * request gets the family's own refusal (401/403).
   */
  failed(request: FastifyRequest, family: AuthFamily, credential: string): Promise<number | undefined>;
}

declare module "fastify" {
  interface FastifyInstance {
    authThrottle: AuthThrottle;
  }
}

/**
 * The address key. An IPv6 client holds a whole /64 (its prefix), so one
 * address there is the /64, and an IPv4-mapped address is its IPv4 address:
 * @fastify/rate-limit's own normalizeIP, as its default key counts them.
 */
export function addressKey(ip: string): string {
  return `auth-failures:address:${normalizeIP(ip)}`;
}

/**
 * The identity key of a wrong token: there is no user name on any door, so
 * the identity is the token's SHA-256, cut to 16 bits. The same wrong token
 * sent from many addresses is counted once; the shared table holds at most
 * 65,536 identity rows however many tokens are guessed. Two wrong tokens that
 * share the prefix share a count, which costs nothing: a valid token is never refused.
 */
export function identityKey(credential: string): string {
  return `auth-failures:token:${createHash("sha256").update(credential, "utf8").digest("hex").slice(0, 4)}`;
}

/** A wrong credential over the limit (RFC 6585 §4): says when to come back, never which key was over. */
export function throttledAnswer(request: FastifyRequest, retryAfterSeconds: number): Answer {
  return problemAnswer("GW_ERR_AUTH_THROTTLED", request.id, {
    detail: `the token is not valid, and too many wrong tokens came from your address or with this token; the right token is accepted at any time, a wrong one again in ${retryAfterSeconds} s`,
    retryAfterSeconds,
  });
}

type Limiter = ReturnType<FastifyInstance["createRateLimit"]>;

/** Seconds until `limiter` lets the request's key through again, or undefined when it is within the limit. */
async function waitOf(limiter: Limiter, request: FastifyRequest): Promise<number | undefined> {
  const result = await limiter(request);
  if (result.isAllowed || !result.isExceeded) return undefined;
  return Math.max(1, result.ttlInSeconds);
}

export interface AuthThrottleOptions {
  /** The register's counter shared by every instance (PostgreSQL); without it each process counts alone. */
  counter: HitCounter | undefined;
}

/**
 * Decorates the app with `authThrottle`, counted by @fastify/rate-limit:
 * in the register's shared HitCounter when there is one (every instance sees
 * the same counts), otherwise in the plugin's bounded in-memory store. Its
 * limiters are called by hand, only for wrong credentials: the plugin's own
 * route hook would count every request, the right ones included.
 */
async function authThrottlePlugin(app: FastifyInstance, options: AuthThrottleOptions): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    max: AUTH_FAILURE_LIMIT.max,
    timeWindow: AUTH_FAILURE_LIMIT.windowMs,
    // If the shared counter cannot be reached, the register is down too: the family's own answer goes out.
    skipOnError: true,
    ...(options.counter === undefined ? {} : { store: sharedRateLimitStore(options.counter) }),
  });
  const byAddress = app.createRateLimit({ keyGenerator: (request) => addressKey(request.ip) });
  const byCredential = new WeakMap<FastifyRequest, string>();
  const byIdentity = app.createRateLimit({ keyGenerator: (request) => identityKey(byCredential.get(request) ?? "") });

  app.decorate("authThrottle", {
    async failed(request, family, credential) {
      byCredential.set(request, credential);
      const [addressWait, identityWait] = await Promise.all([waitOf(byAddress, request), waitOf(byIdentity, request)]);
      const wait = Math.max(addressWait ?? 0, identityWait ?? 0);
      const fields = { auth: family, client_ip: request.ip };
      if (wait === 0) request.log.warn(fields, "authentication failed: wrong token");
      else request.log.warn({ ...fields, retry_after_s: wait }, "authentication failed: wrong token, throttled");
      return wait === 0 ? undefined : wait;
    },
  } satisfies AuthThrottle);
}

export const authThrottle = fp(authThrottlePlugin, { name: "auth-throttle", fastify: "5.x" });
