import type { FastifyInstance } from "fastify";
import type { EventRegister } from "../../register/port.ts";
import { problemAnswer } from "../answers.ts";
import { sendAnswer } from "../problem-handler.ts";

export interface HealthRoutesOptions {
  register: EventRegister;
}

/**
 * /healthz: the process serves (for a restart policy). /readyz: it can accept
 * events now, the register writable (for a balancer). While stopping, both
 * get the shutting-down 503 from the app's onRequest hook.
 */
export async function healthRoutes(app: FastifyInstance, options: HealthRoutesOptions): Promise<void> {
  app.get("/healthz", async () => ({ status: "ok" }));

  app.get("/readyz", async (request, reply) => {
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
