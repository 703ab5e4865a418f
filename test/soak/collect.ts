import type { SoakEvent } from "./events.ts";
import type { Reply, ShopHttp } from "./http.ts";

const CONCURRENCY = 16;
const CONNECTION_TRIES = 3;

/** Every event's status URL, asked of every gateway. */
export function statusViews(
  http: ShopHttp,
  gateways: readonly string[],
  events: readonly SoakEvent[],
): Promise<Map<string, Reply>[]> {
  return Promise.all(
    gateways.map((url) => askAll(events, (event) => steady(() => http.getStatus(url, event.eventId)))),
  );
}

/** Every event's bytes once more, to every gateway: all should be byte-identical 200 replays by now. */
export function resendAll(
  http: ShopHttp,
  gateways: readonly string[],
  events: readonly SoakEvent[],
): Promise<Map<string, Reply>[]> {
  return Promise.all(
    gateways.map((url) =>
      askAll(events, (event) =>
        steady(() => http.postEvent(url, event.eventId, event.bytes, `${event.eventId}.resend`)),
      ),
    ),
  );
}

/**
 * Nothing is being killed any more, so a connection error here is most likely
 * a kept-alive socket from a gateway's previous life: try again on a fresh one.
 */
async function steady(call: () => Promise<Reply>): Promise<Reply> {
  let reply = await call();
  for (let tries = 1; reply.kind === "connection_error" && tries < CONNECTION_TRIES; tries++) reply = await call();
  return reply;
}

async function askAll(
  events: readonly SoakEvent[],
  ask: (event: SoakEvent) => Promise<Reply>,
): Promise<Map<string, Reply>> {
  const replies = new Map<string, Reply>();
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let event = events[next++]; event !== undefined; event = events[next++]) {
      replies.set(event.eventId, await ask(event));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return replies;
}
