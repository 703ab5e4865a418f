import type { FastifyInstance } from "fastify";
import type { EventRegister } from "../../register/port.ts";
import { problemAnswer } from "../answers.ts";
import { sendAnswer } from "../problem-handler.ts";
import { answers, EVERY_ROUTE, success } from "../schemas/responses.ts";

export interface HealthRoutesOptions {
  register: EventRegister;
  /** SIGTERM came and the server is about to stop (SHUTDOWN_DELAY_MS): not ready, though still serving. */
  draining: () => boolean;
}

const healthSchema = {
  operationId: "getHealth",
  tags: ["operations"],
  security: [],
  summary: "Liveness",
  description: "200 while the process serves (for a restart policy).",
  response: answers({ 200: success("Alive.", { schema: "Health" }) }, EVERY_ROUTE),
};

const readinessSchema = {
  operationId: "getReadiness",
  tags: ["operations"],
  security: [],
  summary: "Readiness",
  description: "200 when the gateway can accept events now (the register is writable), 503 otherwise (for a balancer).",
  response: answers({ 200: success("Ready.", { schema: "Readiness" }) }, [
    ...EVERY_ROUTE,
    "GW_ERR_STORAGE_UNAVAILABLE",
  ]),
};

/**
 * /healthz: the process serves (for a restart policy). /readyz: it can accept
 * events now, the register writable (for a balancer). While draining, /readyz
 * alone says 503 so the balancer moves traffic away; once closing, every
 * route gets the shutting-down 503 from the app's onRequest hook.
 */
export async function healthRoutes(app: FastifyInstance, options: HealthRoutesOptions): Promise<void> {
  app.get("/healthz", { schema: healthSchema }, async () => ({ status: "ok" }));

  app.get("/readyz", { schema: readinessSchema }, async (request, reply) => {
    if (options.draining()) {
      return sendAnswer(
        reply,
        problemAnswer("GW_ERR_SHUTTING_DOWN", request.id, {
          detail: "the gateway is stopping: send new requests to another instance",
          retryAfterSeconds: 1,
        }),
      );
    }
    try {
      await options.register.ping();
      return { status: "ready" };
    } catch (error) {
      request.log.warn({ err: error }, "not ready: the register cannot take its write lock");
      return sendAnswer(
        reply,
        problemAnswer("GW_ERR_STORAGE_UNAVAILABLE", request.id, {
          detail: "the event register is not writable now",
          retryAfterSeconds: 2,
        }),
      );
    }
  });
}
