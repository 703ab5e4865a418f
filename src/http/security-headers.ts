import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from "fastify";
import fp from "fastify-plugin";

/**
 * RFC 6797 HSTS: a year, as helmet and the browsers' preload rules use;
 * includeSubDomains covers only names under the gateway's own host name.
 */
export const HSTS = "max-age=31536000; includeSubDomains";

/** Whether the request came over TLS (directly, or through a proxy trusted with TRUST_PROXY). */
export function overTls(request: FastifyRequest): boolean {
  return request.protocol === "https";
}

/**
 * On every answer that leaves through Fastify (JSON, problem+json, pages,
 * redirects, the router's refusals): nosniff, and HSTS when the request came
 * over TLS. RFC 6797 §7.2 forbids HSTS over plain HTTP, which is why
 * @fastify/helmet is not used here: it sends HSTS whatever the transport, and
 * builds its middleware anew on every request, in two hooks, on the accept
 * path. One synchronous hook with two constant headers costs next to nothing.
 */
const addTransportHeaders: onSendHookHandler = (request, reply, payload, done) => {
  setTransportHeaders(request, reply);
  done(null, payload);
};

/** For the answers no hook sees: the router's refusals (frameworkErrors). */
export function setTransportHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header("x-content-type-options", "nosniff");
  if (overTls(request)) reply.header("strict-transport-security", HSTS);
}

async function securityHeadersPlugin(app: FastifyInstance): Promise<void> {
  app.addHook("onSend", addTransportHeaders);
}

/** Wrapped with fastify-plugin: the hook is the root's, so every route and every error answer has it. */
export const securityHeaders = fp(securityHeadersPlugin, { name: "security-headers", fastify: "5.x" });
