import type { FastifyInstance } from "fastify";
import type { GatewayMetrics } from "../../observability/metrics.ts";
import { PROMETHEUS_MEDIA_TYPE } from "../openapi/json.ts";
import { answers, EVERY_ROUTE, success } from "../schemas/responses.ts";

const metricsSchema = {
  operationId: "getMetrics",
  tags: ["operations"],
  security: [],
  summary: "Prometheus metrics",
  description: "The Prometheus text exposition format.",
  response: answers(
    { 200: success("Metrics.", { schema: { type: "string" }, mediaType: PROMETHEUS_MEDIA_TYPE }) },
    EVERY_ROUTE,
  ),
};

/** Prometheus text. Unauthenticated, like /healthz: keep it off the public edge. */
export async function metricsRoutes(app: FastifyInstance, options: { metrics: GatewayMetrics }): Promise<void> {
  app.get("/metrics", { schema: metricsSchema }, async (_request, reply) => {
    const text = await options.metrics.render();
    return reply.header("cache-control", "no-store").type(options.metrics.contentType).send(text);
  });
}
