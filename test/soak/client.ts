import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import type { SoakEvent } from "./events.ts";
import type { Reply, ShopHttp } from "./http.ts";
import type { Prng } from "./prng.ts";

export interface Answer {
  readonly status: number;
  readonly body: string;
  /** Index of the gateway that answered. */
  readonly gateway: number;
}

/** Everything the shop saw for one event. */
export interface Ledger {
  readonly event: SoakEvent;
  readonly answers: Answer[];
  requests: number;
  connectionErrors: number;
  /** Each request given up on: its correlation id, gateway, when sent and how long it was waited for, to look up in the logs. */
  readonly unanswered: string[];
  /** The answer that ended the shop's retries: 200/201, or a refusal it must not retry. */
  final: Answer | undefined;
}

export interface ClientSettings {
  readonly workers: number;
  readonly gateways: readonly string[];
  /** New events become due one every this many ms: the shop's order rate. */
  readonly intervalMs: number;
  /** Retry-After is honoured up to this. */
  readonly retryAfterCapMs: number;
  /**
   * Share of events whose first send goes to both gateways at once (the
   * button pressed twice, a balancer's hedged retry): one process then waits
   * on the other's delivery.
   */
  readonly doubleSendShare: number;
}

/** Statuses the shop retries with the same bytes; every other answer is final. */
const RETRY = new Set([202, 408, 429, 500, 503, 504]);
/** After a refused or cut connection: a random wait from the first up to the cap, which doubles per failure in a row. */
const ERROR_BACKOFF_MS = [100, 2_000] as const;

function errorBackoffCap(failuresInARow: number): number {
  return Math.min(ERROR_BACKOFF_MS[1], 200 * 2 ** (failuresInARow - 1));
}

/**
 * The shop. Its steady traffic: `workers` concurrent senders taking events in
 * order as they become due, each retrying its event (same bytes, a random
 * gateway each time, honouring Retry-After) until it gets a final answer or
 * `stop` fires. And a flash sale now and then: a burst of events all at once.
 */
export class ShopClient {
  /** Every event either traffic sent, in the order they were handed over. */
  readonly ledgers: Ledger[] = [];
  readonly #http: ShopHttp;
  readonly #settings: ClientSettings;

  constructor(http: ShopHttp, settings: ClientSettings) {
    this.#http = http;
    this.#settings = settings;
  }

  /** Resolves when every event has a final answer, or when `stop` aborts (what is left stays unfinished). */
  async run(events: readonly SoakEvent[], prng: Prng, stop: AbortSignal): Promise<void> {
    const ledgers = this.#track(events);
    const startedAt = performance.now();
    // Every worker's pause listens on it: sixteen at once are the design, not a leak.
    setMaxListeners(0, stop);
    let next = 0;
    const work = async (prng: Prng): Promise<void> => {
      for (let i = next++; i < ledgers.length; i = next++) {
        const ledger = ledgers[i] as Ledger;
        if (!(await pause(startedAt + i * this.#settings.intervalMs - performance.now(), stop))) return;
        if (!(await this.#deliver(ledger, prng, stop, this.#settings.doubleSendShare))) return;
      }
    };
    await Promise.all(Array.from({ length: this.#settings.workers }, () => work(prng.fork())));
  }

  /**
   * Every event at once, each first sent to both gateways together: hundreds
   * of requests waiting on deliveries, many of them another process's.
   */
  async burst(events: readonly SoakEvent[], prng: Prng, stop: AbortSignal): Promise<void> {
    setMaxListeners(0, stop);
    await Promise.all(this.#track(events).map((ledger) => this.#deliver(ledger, prng.fork(), stop, 1)));
  }

  #track(events: readonly SoakEvent[]): Ledger[] {
    const ledgers = events.map((event) => ({
      event,
      answers: [],
      requests: 0,
      connectionErrors: 0,
      unanswered: [],
      final: undefined,
    }));
    this.ledgers.push(...ledgers);
    return ledgers;
  }

  /** False when stopped before a final answer. */
  async #deliver(ledger: Ledger, prng: Prng, stop: AbortSignal, doubleSendShare: number): Promise<boolean> {
    const gateways = this.#settings.gateways.length;
    let targets = prng.next() < doubleSendShare ? [...this.#settings.gateways.keys()] : undefined;
    let refusedInARow = 0;
    for (;;) {
      if (stop.aborted) return false;
      targets ??= [prng.int(0, gateways - 1)];
      const replies = await Promise.all(targets.map((gateway) => this.#send(ledger, gateway)));
      const waits = replies.map((reply, i) => this.#record(ledger, reply, targets?.[i] ?? 0));
      if (waits.includes(undefined)) return true;
      targets = undefined;
      // Both gateways may be down for seconds: hundreds of senders must not spin on refused connections.
      refusedInARow = replies.every((reply) => reply.kind === "connection_error") ? refusedInARow + 1 : 0;
      const backoff = refusedInARow === 0 ? 0 : prng.int(ERROR_BACKOFF_MS[0], errorBackoffCap(refusedInARow));
      if (!(await pause(Math.max(backoff, ...(waits as number[])), stop))) return false;
    }
  }

  async #send(ledger: Ledger, gateway: number): Promise<Reply> {
    const { event } = ledger;
    ledger.requests += 1;
    const url = this.#settings.gateways[gateway] as string;
    const correlationId = `${event.eventId}.${ledger.requests}`;
    const sentAt = new Date();
    const reply = await this.#http.postEvent(url, event.eventId, event.bytes, correlationId);
    if (reply.kind === "unanswered") {
      // Also how long it was waited for: far past the deadline, this process was starved, not only the gateway slow.
      const waitedS = ((Date.now() - sentAt.getTime()) / 1000).toFixed(1);
      ledger.unanswered.push(`${correlationId} to gateway ${"AB"[gateway]} at ${sentAt.toISOString()}, ${waitedS} s`);
    }
    return reply;
  }

  /** Records the reply; returns how long to wait before the retry, or undefined when it was final. */
  #record(ledger: Ledger, reply: Reply, gateway: number): number | undefined {
    // Unanswered requests are noted by #send, which knows which request it was.
    if (reply.kind === "unanswered") return 0;
    if (reply.kind === "connection_error") {
      ledger.connectionErrors += 1;
      return 0;
    }
    const answer: Answer = { status: reply.status, body: reply.body, gateway };
    ledger.answers.push(answer);
    if (!RETRY.has(reply.status)) {
      ledger.final ??= answer;
      return undefined;
    }
    const asked = reply.retryAfterS === undefined ? 500 : reply.retryAfterS * 1000;
    return Math.min(asked, this.#settings.retryAfterCapMs);
  }
}

/** False when `stop` fired first. */
async function pause(ms: number, stop: AbortSignal): Promise<boolean> {
  if (stop.aborted) return false;
  if (ms <= 0) return true;
  try {
    await sleep(ms, undefined, { signal: stop });
    return true;
  } catch {
    return false;
  }
}
