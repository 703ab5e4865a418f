import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { OrderPaidAcceptor } from "./accept/order-paid-acceptor.ts";
import { buildApp } from "./app.ts";
import type { GatewayConfig } from "./config/load-config.ts";
import { OnecClient } from "./onec/client.ts";
import type { EventRegister } from "./register/port.ts";
import { SqliteRegister } from "./register/sqlite/sqlite-register.ts";

/**
 * A delivery lease outlives the 1C deadline by a margin, so an attempt still
 * waiting on 1C is never taken over; a crashed one is taken over soon after.
 */
export function leaseMsFor(onecTimeoutMs: number): number {
  return onecTimeoutMs + Math.max(1000, Math.round(onecTimeoutMs / 2));
}

export interface Gateway {
  app: FastifyInstance;
  register: EventRegister;
  acceptor: OrderPaidAcceptor;
  /** Stops taking requests, lets running attempts write their outcome, closes storage. */
  close(): Promise<void>;
}

/** Wires the parts together. The one place that knows every concrete class. */
export function createGateway(config: GatewayConfig, logger: Logger): Gateway {
  const now = Date.now;
  const register = new SqliteRegister(config.databasePath);
  const onec = new OnecClient({
    baseUrl: config.onecUrl,
    user: config.onecUser,
    password: config.onecPassword,
    timeoutMs: config.onecTimeoutMs,
  });
  const acceptor = new OrderPaidAcceptor(
    register,
    {
      register,
      onec,
      now,
      log: logger,
      retry: { baseMs: config.retryBaseMs, maxDelayMs: config.retryMaxDelayMs },
    },
    { syncWaitMs: config.syncWaitMs, leaseMs: leaseMsFor(config.onecTimeoutMs) },
  );
  const app = buildApp({
    acceptor,
    register,
    logger,
    bodyLimit: config.bodyLimit,
    requestTimeoutMs: config.requestTimeoutMs,
    now,
  });

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await app.close();
      await acceptor.drain();
      await onec.close();
      await register.close();
    })();
    return closing;
  };
  return { app, register, acceptor, close };
}
