import type { FastifyInstance } from "fastify";
import type { OrderPaidAcceptor } from "../../src/accept/order-paid-acceptor.ts";
import { buildApp } from "../../src/app.ts";
import { createLogger } from "../../src/observability/logger.ts";
import type { GatewayMetrics } from "../../src/observability/metrics.ts";
import type { EventRegister } from "../../src/register/port.ts";

/**
 * The HTTP edge with every route (the admin routes and the console too), for the
 * tests that read what it documents and serves without a backend: /openapi.json
 * and /docs. Registration reads none of these stand-ins; the handlers that
 * would are never called. Not listening: ask it with inject().
 */
export function appForDocuments(): FastifyInstance {
  return buildApp({
    acceptor: {} as OrderPaidAcceptor,
    register: {} as EventRegister,
    adminToken: "admin-token-for-the-documents-tests",
    senders: [],
    rateLimit: { max: 100, windowMs: 60_000 },
    metrics: {} as GatewayMetrics,
    logger: createLogger("silent"),
    bodyLimit: 1024 * 1024,
    requestTimeoutMs: 10_000,
    now: Date.now,
  });
}
