import type { FastifyInstance } from "fastify";
import type { EventRegister } from "../../register/port.ts";
import { PROBE_DEADLINE_MS } from "../../register/writability.ts";
import { withinDeadline } from "../../util/deadline.ts";
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
  description:
    "200 when the gateway can accept events now (the register is writable), 503 otherwise (for a balancer). Answered from state a background probe and the real writes keep up to date: within 1 s of the register becoming unwritable or writable again, and never waiting on a broken database.",
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
    if (await writable(options.register)) return { status: "ready" };
    return sendAnswer(
      reply,
      problemAnswer("GW_ERR_STORAGE_UNAVAILABLE", request.id, {
        detail: "the event register is not writable now",
        retryAfterSeconds: 2,
      }),
    );
  });
}

/**
 * The gateway's register carries its writability, kept up to date in the
 * background (writability.ts): the answer comes from memory, however the
 * database fails, and its changes are logged there. A bare register (an app
 * built without the gateway) is pinged, within the probe's deadline.
 */
async function writable(register: EventRegister): Promise<boolean> {
  if (register.writability !== undefined) return register.writability.writable;
  const pinged = register.ping().then(
    () => true,
    () => false,
  );
  return withinDeadline(pinged, PROBE_DEADLINE_MS, false);
}
