import type { FastifyInstance } from "fastify";
import type { GatewayMetrics } from "../../observability/metrics.ts";

/** Prometheus text. Unauthenticated, like /healthz: keep it off the public edge. */
export async function metricsRoutes(app: FastifyInstance, options: { metrics: GatewayMetrics }): Promise<void> {
  app.get("/metrics", async (_request, reply) => {
    const text = await options.metrics.render();
    return reply.header("cache-control", "no-store").type(options.metrics.contentType).send(text);
  });
}
