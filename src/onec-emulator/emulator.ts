import { randomUUID } from "node:crypto";
import { EventEmitter, setMaxListeners } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
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
  /** Emits "post" (PostReceived) for each POST received and "committed" (EmulatorOrder) for each order created. */
  readonly events: EventEmitter;
  /** Closes the server and destroys every open socket, hung ones included. */
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
type MethodTable = Partial<Record<string, Handler>>;

const EVENTS_PREFIX = "/v1/events/";

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
  const orderPaid: OrderPaidContext = {
    store,
    credentials,
    events,
    closing: closing.signal,
    faults: () => faults,
    hanging,
  };

  // Resolved per request so the /v1/events/{id} segment can be carried into its handler.
  function routesFor(path: string): MethodTable | undefined {
    switch (path) {
      case "/v1/orders/paid":
        return {
          POST: (req, res) => {
            posts += 1;
            return handleOrderPaid(req, res, orderPaid, correlationIdOf(res));
          },
        };
      case "/v1/health":
        return {
          GET: (req, res) => {
            if (requireAuth(req, res, credentials)) handleHealth(res, faults);
          },
        };
      case "/_emulator/orders":
        return { GET: (_req, res) => handleListOrders(res, control) };
      case "/_emulator/hanging":
        return { GET: (_req, res) => handleListHanging(res, control) };
      case "/_emulator/faults":
        return {
          GET: (_req, res) => handleGetFaults(res, control),
          PUT: (req, res) => handlePutFaults(req, res, control),
        };
      case "/_emulator/reset":
        return { POST: (_req, res) => handleReset(res, control) };
    }
    if (path.startsWith(EVENTS_PREFIX)) {
      const id = path.slice(EVENTS_PREFIX.length);
      if (id === "" || id.includes("/")) return undefined;
      return {
        GET: (req, res) => {
          if (requireAuth(req, res, credentials)) handleEventStatus(res, store, id);
        },
      };
    }
    return undefined;
  }

  async function dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const given = headerValue(req, "x-correlation-id");
    res.setHeader("x-correlation-id", given !== undefined && given !== "" ? given : randomUUID());
    res.setHeader("x-contract-version", CONTRACT_VERSION);
    // The raw target, not a parsed URL: URL parsing would fold "." and ".." segments inside event ids.
    const path = (req.url ?? "/").split("?", 1)[0] ?? "/";
    const table = routesFor(path);
    if (table === undefined) {
      sendError(res, 404, "NOT_FOUND", `no route for ${path}`);
      return;
    }
    const handler = table[req.method ?? ""];
    if (handler === undefined) {
      sendError(res, 405, "METHOD_NOT_ALLOWED", `${req.method} is not allowed on ${path}`, {
        allow: Object.keys(table).join(", "),
      });
      return;
    }
    await handler(req, res);
  }

  const server = createServer((req, res) => {
    dispatch(req, res).catch(() => {
      // Mostly a client that left mid-body; nobody is left to tell, so just free the socket.
      if (res.headersSent || res.destroyed) res.destroy();
      else sendError(res, 500, "INTERNAL", "emulator failed to handle the request");
    });
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    journal?.close();
    throw error;
  }
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
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => {
          journal?.close();
          resolve();
        });
        // server.close() alone would wait for hung requests forever.
        server.closeAllConnections();
      });
      return closed;
    },
  };
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
