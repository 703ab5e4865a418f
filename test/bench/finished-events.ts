import { setTimeout as sleep } from "node:timers/promises";
import { Agent, request } from "undici";
import { BENCH_SENDER_TOKEN, type Delivery, ROUTE } from "./load.ts";

/**
 * The replay row's set-up, not measured: events recorded through the gateway
 * itself, as a sender records them, then waited for until the gateway's own
 * deliverer has settled every one as SUCCEEDED, so that each repeat in the
 * measured load is answered 200 from the register.
 */

/** Recording and status reads in flight at once: enough to be quick, few enough not to queue behind each other. */
const CONCURRENCY = 10;
/** Between looks at the events still pending; the deadline, not this, bounds the wait. */
const POLL_MS = 100;

const AUTHORIZATION = { authorization: `Bearer ${BENCH_SENDER_TOKEN}` };

/**
 * POSTs every body once (202 or 201 expected), then polls each event's status
 * URL (the answer's Location) until it says SUCCEEDED; throws at the first
 * event that ends otherwise, or when some are still pending at the deadline.
 */
export async function recordFinishedEvents(
  gatewayUrl: string,
  bodies: readonly string[],
  limitMs: number,
): Promise<void> {
  const agent = new Agent({ connections: CONCURRENCY });
  try {
    const statusUrls = await inParallel(bodies, (body) => record(gatewayUrl, agent, body));
    await waitUntilSucceeded(gatewayUrl, agent, statusUrls, limitMs);
  } finally {
    await agent.close();
  }
}

/**
 * The peers' and the webhook scenario's set-up: POSTs every body once,
 * `expectedStatus` expected of each (a peer's first answer); a peer has no
 * delivery to wait for. A platform's deliveries go to `path` with their own headers.
 */
export async function recordEvents(
  url: string,
  bodies: readonly (string | Delivery)[],
  expectedStatus: number,
  path = ROUTE,
): Promise<void> {
  const agent = new Agent({ connections: CONCURRENCY });
  try {
    await inParallel(bodies, async (item) => {
      const { body, headers } =
        typeof item === "string"
          ? { body: item, headers: { ...AUTHORIZATION, "content-type": "application/json" } }
          : item;
      const response = await request(`${url}${path}`, { method: "POST", dispatcher: agent, headers, body });
      const text = await response.body.text();
      if (response.statusCode !== expectedStatus) {
        throw new Error(`recording an event at ${url}: ${response.statusCode} ${text}, not ${expectedStatus}`);
      }
    });
  } finally {
    await agent.close();
  }
}

/** Resolves with the event's status URL, from the Location header every answer carries. */
async function record(gatewayUrl: string, agent: Agent, body: string): Promise<string> {
  const response = await request(`${gatewayUrl}${ROUTE}`, {
    method: "POST",
    dispatcher: agent,
    headers: { ...AUTHORIZATION, "content-type": "application/json" },
    body,
  });
  const text = await response.body.text();
  const location = response.headers.location;
  if ((response.statusCode !== 202 && response.statusCode !== 201) || typeof location !== "string") {
    throw new Error(`recording an event for the replay row: ${response.statusCode} ${text}`);
  }
  return location;
}

async function waitUntilSucceeded(
  gatewayUrl: string,
  agent: Agent,
  statusUrls: readonly string[],
  limitMs: number,
): Promise<void> {
  const deadline = performance.now() + limitMs;
  let pending = statusUrls;
  for (;;) {
    const statuses = await inParallel(pending, (url) => eventStatus(gatewayUrl, agent, url));
    const failed = statuses.find((status) => status === "FAILED_FINAL");
    if (failed !== undefined) throw new Error("an event for the replay row ended FAILED_FINAL: is 1C refusing it?");
    pending = pending.filter((_, i) => statuses[i] !== "SUCCEEDED");
    if (pending.length === 0) return;
    if (performance.now() > deadline) {
      throw new Error(
        `replay row: ${pending.length} of ${statusUrls.length} recorded events not SUCCEEDED within ${limitMs} ms`,
      );
    }
    await sleep(POLL_MS);
  }
}

async function eventStatus(gatewayUrl: string, agent: Agent, statusUrl: string): Promise<string> {
  const response = await request(new URL(statusUrl, gatewayUrl), { dispatcher: agent, headers: AUTHORIZATION });
  const text = await response.body.text();
  const { status } = (response.statusCode === 200 ? JSON.parse(text) : {}) as { status?: unknown };
  if (typeof status !== "string") throw new Error(`GET ${statusUrl} answered ${response.statusCode}: ${text}`);
  return status;
}

/** `work` on every item, CONCURRENCY at a time; the results in the items' order. */
async function inParallel<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const loop = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i] as T);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  return results;
}
