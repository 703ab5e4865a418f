import { readFileSync } from "node:fs";
import autocannon from "autocannon";

export const ROUTE = "/integration/v1/orders/paid";
const EXAMPLE = new URL("../../schemas/examples/order-paid.json", import.meta.url);

export interface LoadSettings {
  readonly connections: number;
  readonly durationSeconds: number;
}

/** The shared example event, parsed: every scenario sends it under new ids. */
export function orderPaidExample(): Record<string, unknown> {
  return JSON.parse(readFileSync(EXAMPLE, "utf8")) as Record<string, unknown>;
}

/**
 * Bodies of the shared example event, each under a new event_id: the gateway
 * must do the full accept (insert + fsync) every time, never a cheap replay.
 * The JSON is cut once around the id so each body is a concatenation, which
 * keeps the load generator's own cost per request tiny and the same for both servers.
 */
export function orderPaidBodies(runId: string): () => string {
  const marker = "__BENCH_EVENT_ID__";
  const example = orderPaidExample();
  const [head, rest, ...extra] = JSON.stringify({ ...example, event_id: marker }).split(`"${marker}"`);
  if (head === undefined || rest === undefined || extra.length > 0) throw new Error("cannot template the example");
  let n = 0;
  // Ids stay within [A-Za-z0-9._:-], so they need no JSON escaping.
  return () => `${head}"bench-${runId}-${++n}"${rest}`;
}

/**
 * The same bodies over and over, in turn: each request repeats an event the
 * gateway has already recorded, so every answer is a replay of its first.
 */
export function repeatingBodies<T extends string | Delivery>(bodies: readonly T[]): () => T {
  if (bodies.length === 0) throw new Error("nothing to repeat");
  let n = 0;
  return () => bodies[n++ % bodies.length] as T;
}

/**
 * Each body with the same event_id but another payment id: a valid event
 * whose content differs from the one recorded, so every request is the 409
 * case (or a peer's own status for a key reused with another body).
 */
export function conflictingBodies(bodies: readonly string[]): string[] {
  return bodies.map((body) => {
    const event = JSON.parse(body) as { payment?: { id?: unknown } };
    if (event.payment === undefined || typeof event.payment.id !== "string") throw new Error("no payment.id to change");
    return JSON.stringify({ ...event, payment: { ...event.payment, id: `${event.payment.id}-changed` } });
  });
}

/** The bench's one sender (SENDER_TOKENS=bench:<this>): production auth is part of the cost. */
export const BENCH_SENDER_TOKEN = "bench-sender-token-0123456789";

/**
 * autocannon takes several URLs and opens connection i to URL i mod n
 * (lib/run.js, initialiseClients); its typings know only one.
 */
type MultiUrlAutocannon = (
  options: Omit<autocannon.Options, "url"> & { url: string | string[] },
) => Promise<autocannon.Result>;
const autocannonOnUrls = autocannon as unknown as MultiUrlAutocannon;

/** A request with headers of its own: a platform's delivery, signed over its body. */
export interface Delivery {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** What a row sends, and the one answer it must get to every request. */
export interface Requests {
  /** A body for ROUTE under the bench sender's token, or a delivery for `path` with its own headers. */
  readonly nextBody: () => string | Delivery;
  /** Where deliveries go (a platform's webhook URL); unset, ROUTE. */
  readonly path?: string;
  /** 201 from the bare server, 202 for a new event (SYNC_WAIT_MS=0), 200 for a repeat of a finished one. */
  readonly expectedStatus: number;
  /** Called before each run with its length, outside it: where requests built ahead of the load are built. */
  readonly prepare?: (durationSeconds: number) => void;
}

/** The bench sender's token on the orders route; a platform's delivery brings its own headers. */
const SENDER_HEADERS = { "content-type": "application/json", authorization: `Bearer ${BENCH_SENDER_TOKEN}` };

export interface LoadRun {
  readonly result: autocannon.Result;
  readonly expectedStatus: number;
  /** Answers with any other status: a replay where a new event was meant, a 429, a 503… */
  readonly unexpected: number;
}

/**
 * One autocannon run of POSTs with the next body per request, counting the
 * answers that are not the expected status. Several servers share the
 * connections round-robin, each connection keeping to its server
 * (keep-alive), as behind a TCP load balancer.
 */
export async function runLoad(
  baseUrls: readonly string[],
  settings: LoadSettings,
  { nextBody, path, expectedStatus, prepare }: Requests,
): Promise<LoadRun> {
  prepare?.(settings.durationSeconds);
  const result = await autocannonOnUrls({
    url: baseUrls.map((baseUrl) => `${baseUrl}${path ?? ROUTE}`),
    method: "POST",
    // The bare server ignores the token; the gateway authenticates it as a configured sender.
    headers: path === undefined ? SENDER_HEADERS : {},
    connections: settings.connections,
    duration: settings.durationSeconds,
    requests: [
      {
        setupRequest: (request) => {
          const next = nextBody();
          if (typeof next === "string") request.body = next;
          else {
            request.body = next.body;
            request.headers = { ...request.headers, ...next.headers };
          }
          return request;
        },
      },
    ],
  });
  return { result, expectedStatus, unexpected: answersOtherThan(result, expectedStatus) };
}

function answersOtherThan(result: autocannon.Result, expectedStatus: number): number {
  return Object.entries(result.statusCodeStats ?? {})
    .filter(([code]) => Number(code) !== expectedStatus)
    .reduce((sum, [, { count }]) => sum + (count ?? 0), 0);
}
