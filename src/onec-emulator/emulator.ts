import { randomUUID } from "node:crypto";
import { EventEmitter, setMaxListeners } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { CONTRACT_VERSION } from "../onec/contract/version.ts";
import { type Credentials, requireAuth } from "./auth.ts";
import {
  type EmulatorControl,
  handleGetFaults,
  handleListHanging,
  handleListOrders,
  handlePutFaults,
  handleReset,
} from "./control-handlers.ts";
import { handleEventStatus } from "./event-status-handler.ts";
import { applyFaults, copyFaults, defaultFaults, type EmulatorFaults } from "./faults.ts";
import { handleHealth } from "./health-handler.ts";
import { headerValue, sendError } from "./http-io.ts";
import { type OrderJournal, openOrderJournal } from "./journal.ts";
import { KeyLocks } from "./key-locks.ts";
import { HangingCalls, handleOrderPaid, type OrderPaidContext } from "./order-paid-handler.ts";
import { type EmulatorOrder, OrderStore } from "./store.ts";

export type { EmulatorFaults } from "./faults.ts";
export type { PostReceived } from "./order-paid-handler.ts";
export type { EmulatorOrder } from "./store.ts";

export interface OnecEmulatorOptions {
  host?: string;
  port?: number;
  /** When set (non-empty), /v1/* requires these Basic credentials. */
  user?: string;
  password?: string;
  faults?: Partial<EmulatorFaults>;
  /**
   * A file to keep created orders in (one JSON line each), read back at start:
   * orders, their keys and numbers survive a `kill -9`, as a real 1C's would.
   * Without it the store lives in memory only.
   */
  journalPath?: string;
}

export interface OnecEmulator {
  /** "http://127.0.0.1:PORT", no trailing slash. */
  readonly url: string;
  /** A snapshot: change faults through setFaults. */
  readonly faults: EmulatorFaults;
  setFaults(patch: Partial<EmulatorFaults>): void;
  /** Every created order, in creation order. */
  orders(): EmulatorOrder[];
  /** Idempotency keys of the calls hangAfterCommit holds open right now (GET /_emulator/hanging). */
  hanging(): string[];
  /** POST /v1/orders/paid requests received, whatever their outcome. */
  postCount(): number;
  /** Clears the store, the counters and the order sequence, and puts every fault back to its default. */
  reset(): void;
  /**
   * Emits "post" (PostReceived) for each POST received, "posting" (its key) when a valid one has
   * taken its key's lock and posts, and "committed" (EmulatorOrder) for each order created.
   */
  readonly events: EventEmitter;
  /** Closes the server and destroys every open socket, hung ones included. */
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

interface Route {
  method: "GET" | "POST" | "PUT";
  url: string;
  handle: Handler;
}

/** Keys are up to 300 characters of the contract's alphabet; the router's default stops at 100. */
const MAX_KEY_SEGMENT = 512;

export async function startOnecEmulator(options: OnecEmulatorOptions = {}): Promise<OnecEmulator> {
  const journal: OrderJournal | undefined =
    options.journalPath === undefined ? undefined : openOrderJournal(options.journalPath);
  const store = new OrderStore(journal === undefined ? {} : { persist: (record) => journal.append(record) });
  if (journal !== undefined) store.restore(journal.restored);
  const events = new EventEmitter();
  const closing = new AbortController();
  // Every POST waiting out its latency listens on this signal; many at once is the normal case, not a leak.
  setMaxListeners(0, closing.signal);
  const credentials: Credentials | undefined =
    options.user !== undefined && options.user !== ""
      ? { user: options.user, password: options.password ?? "" }
      : undefined;
  let faults = applyFaults(defaultFaults(), options.faults ?? {});
  let posts = 0;
  const hanging = new HangingCalls();

  const control: EmulatorControl = {
    orders: () => store.all(),
    hanging: () => hanging.keys(),
    get faults() {
      return copyFaults(faults);
    },
    setFaults(patch) {
      faults = applyFaults(faults, patch);
    },
    reset() {
      store.clear();
      journal?.clear();
      posts = 0;
      faults = defaultFaults();
    },
  };
  const locks = new KeyLocks();
  const orderPaid: OrderPaidContext = {
    store,
    credentials,
    events,
    closing: closing.signal,
    faults: () => faults,
    hanging,
    locks,
  };

  const routes: Route[] = [
    {
      method: "POST",
      url: "/v1/orders/paid",
      handle: (req, res) => {
        posts += 1;
        return handleOrderPaid(req, res, orderPaid, correlationIdOf(res));
      },
    },
    {
      method: "GET",
      url: "/v1/health",
      handle: (req, res) => {
        if (requireAuth(req, res, credentials)) handleHealth(res, faults);
      },
    },
    {
      method: "GET",
      url: "/v1/events/:key",
      // The raw segment, not the router's decoded parameter: the handler judges escapes itself.
      handle: (req, res) => {
        if (requireAuth(req, res, credentials)) return handleEventStatus(res, orderPaid, rawLastSegment(req));
      },
    },
    { method: "GET", url: "/_emulator/orders", handle: (_req, res) => handleListOrders(res, control) },
    { method: "GET", url: "/_emulator/hanging", handle: (_req, res) => handleListHanging(res, control) },
    { method: "GET", url: "/_emulator/faults", handle: (_req, res) => handleGetFaults(res, control) },
    { method: "PUT", url: "/_emulator/faults", handle: (req, res) => handlePutFaults(req, res, control) },
    { method: "POST", url: "/_emulator/reset", handle: (_req, res) => handleReset(res, control) },
  ];

  const app = buildEmulatorApp(routes);
  try {
    await app.listen({ port: options.port ?? 0, host: options.host ?? "127.0.0.1" });
  } catch (error) {
    journal?.close();
    throw error;
  }
  const server = app.server;
  const url = urlOf(server.address() as AddressInfo);

  let closed: Promise<void> | undefined;
  return {
    url,
    get faults() {
      return control.faults;
    },
    setFaults: control.setFaults,
    orders: control.orders,
    hanging: control.hanging,
    postCount: () => posts,
    reset: control.reset,
    events,
    close() {
      closing.abort();
      // forceCloseConnections: app.close() alone would wait for hung requests forever.
      closed ??= app.close().then(() => journal?.close());
      return closed;
    },
  };
}

/**
 * Fastify routes and answers 404/405; every handler then takes the raw
 * request and response (reply.hijack()), because the faults need what a
 * framework reply hides: an answer never sent, a socket destroyed mid-call,
 * a body read by hand up to a limit.
 */
function buildEmulatorApp(routes: readonly Route[]): FastifyInstance {
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    routerOptions: { maxParamLength: MAX_KEY_SEGMENT },
    // A malformed escape or an over-long segment cannot name a stored key: 404 in 1C's own shape.
    frameworkErrors: (_error, request, reply) => {
      sendError(takeOver(request.raw, reply), 404, "NOT_FOUND", `no route for ${rawPath(request.raw)}`);
    },
  });
  // Bodies are the handlers' to read, with their own limits and errors.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.url,
      handler: async (request, reply) => {
        const res = takeOver(request.raw, reply);
        try {
          await route.handle(request.raw, res);
        } catch {
          // Mostly a client that left mid-body; nobody is left to tell, so just free the socket.
          if (res.headersSent || res.destroyed) res.destroy();
          else sendError(res, 500, "INTERNAL", "emulator failed to handle the request");
        }
      },
    });
  }
  app.setNotFoundHandler((request, reply) => {
    const res = takeOver(request.raw, reply);
    const path = rawPath(request.raw);
    const allowed = routes.filter((route) => matches(route.url, path)).map((route) => route.method);
    if (allowed.length === 0) sendError(res, 404, "NOT_FOUND", `no route for ${path}`);
    else {
      sendError(res, 405, "METHOD_NOT_ALLOWED", `${request.method} is not allowed on ${path}`, {
        allow: allowed.join(", "),
      });
    }
  });
  return app;
}

/** Hijacks the reply and stamps what every answer of 1C's service carries. */
function takeOver(req: IncomingMessage, reply: FastifyReply): ServerResponse {
  reply.hijack();
  const res = reply.raw;
  const given = headerValue(req, "x-correlation-id");
  res.setHeader("x-correlation-id", given !== undefined && given !== "" ? given : randomUUID());
  res.setHeader("x-contract-version", CONTRACT_VERSION);
  return res;
}

function rawPath(req: IncomingMessage): string {
  return (req.url ?? "/").split("?", 1)[0] ?? "/";
}

function rawLastSegment(req: IncomingMessage): string {
  const path = rawPath(req);
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Whether a route's URL (with at most one `:param` segment) covers a raw path. */
function matches(url: string, path: string): boolean {
  const pattern = url.split("/");
  const parts = path.split("/");
  return (
    pattern.length === parts.length && pattern.every((p, i) => (p.startsWith(":") ? parts[i] !== "" : p === parts[i]))
  );
}

function correlationIdOf(res: ServerResponse): string {
  return String(res.getHeader("x-correlation-id"));
}

/** A wildcard bind is reachable on loopback; the URL must be something a client can dial. */
function urlOf(address: AddressInfo): string {
  const host =
    address.address === "0.0.0.0" ? "127.0.0.1" : address.address === "::" ? "[::1]" : formatHost(address.address);
  return `http://${host}:${address.port}`;
}

function formatHost(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}
