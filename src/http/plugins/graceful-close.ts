import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { problemAnswer } from "../answers.ts";
import { sendAnswer } from "../problem-handler.ts";

/** While stopping, how often connections that fell idle are closed. */
const IDLE_REAP_MS = 50;

export interface GracefulCloseOptions {
  /** SIGTERM came and the server stops after SHUTDOWN_DELAY_MS: still serving, but not for long. */
  draining: () => boolean;
}

/**
 * app.close() waits for every open connection, and a keep-alive client would
 * hold it for 72 s. While draining (before the close), every answer says
 * `Connection: close`, so a balancer's kept-alive connections end cleanly
 * after an answer instead of being cut later under a request in flight.
 * While closing, connections are closed as soon as they fall idle, and a
 * request that still arrives on one (pipelined, or sent before the client
 * saw the close) gets a 503 it can retry, never a reset.
 * Wrapped with fastify-plugin: its hooks must see every route's requests.
 */
async function gracefulClose(app: FastifyInstance, options: GracefulCloseOptions): Promise<void> {
  let closing = false;
  let reaper: NodeJS.Timeout | undefined;
  app.addHook("preClose", async () => {
    closing = true;
    reaper = setInterval(() => app.server.closeIdleConnections(), IDLE_REAP_MS);
    reaper.unref();
  });
  app.addHook("onClose", async () => clearInterval(reaper));
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (options.draining()) reply.header("connection", "close");
    done(null, payload);
  });
  app.addHook("onRequest", (request, reply, done) => {
    if (!closing) {
      done();
      return;
    }
    // Answered here, so `done` is not called: the request goes no further.
    sendAnswer(
      reply,
      problemAnswer("GW_ERR_SHUTTING_DOWN", request.id, {
        detail: "the gateway is stopping; nothing was recorded, retry with the same event_id",
        retryAfterSeconds: 1,
      }),
    );
  });
}

export default fp(gracefulClose, { name: "graceful-close", fastify: "5.x" });
