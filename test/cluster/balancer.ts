import { setTimeout as sleep } from "node:timers/promises";
import { call, type HttpAnswer } from "../support/http.ts";

/** An answer, and which instance gave it. */
export type Forwarded = HttpAnswer & { upstream: string; sentAt: number };

/**
 * The connection broke after the request may have reached the instance.
 * A balancer does not resend a POST then (nginx: "non_idempotent" is off by
 * default; HAProxy retries only where configured), so the shop sees an error.
 */
export interface Broken {
  upstream: string;
  code: string;
  /** Epoch ms the request was handed to the instance. */
  sentAt: number;
}

/** Nothing was sent: the instance is down or stopping. Every balancer tries the next one. */
const CONNECT_FAILURES: ReadonlySet<string> = new Set(["ECONNREFUSED", "UND_ERR_CONNECT_TIMEOUT"]);
const NO_UPSTREAM_MS = 15_000;

interface Upstream {
  readonly url: string;
  ready: boolean;
  answers: number;
}

/**
 * A round-robin load balancer in front of the gateways, as docs/operations.md's
 * "Running several instances" expects one: it takes an instance out of rotation while its
 * /readyz is not 200 (checked every `checkEveryMs`) or when a connection to
 * it is refused, and passes a refused request to the next instance.
 */
export class Balancer {
  readonly #upstreams: Upstream[];
  readonly #checkEveryMs: number;
  #next = 0;
  #checking: Promise<void> | undefined;
  #stopped = false;
  /** Requests refused at connect and passed to the next instance. */
  refusedAndPassedOn = 0;

  constructor(urls: readonly string[], checkEveryMs: number) {
    this.#upstreams = urls.map((url) => ({ url, ready: true, answers: 0 }));
    this.#checkEveryMs = checkEveryMs;
  }

  start(): void {
    this.#checking ??= this.#checkLoop();
  }

  /** Answers `url` has given so far, across its lives. */
  answeredBy(url: string): number {
    return this.#upstreams.find((upstream) => upstream.url === url)?.answers ?? 0;
  }

  async post(path: string, body: string, headers: Record<string, string>): Promise<Forwarded | Broken> {
    for (;;) {
      const upstream = await this.#pick();
      const sentAt = Date.now();
      try {
        const answer = await call(`${upstream.url}${path}`, { method: "POST", body, headers });
        upstream.answers += 1;
        return { ...answer, upstream: upstream.url, sentAt };
      } catch (error) {
        const code = codeOf(error);
        if (!CONNECT_FAILURES.has(code)) return { upstream: upstream.url, code, sentAt };
        upstream.ready = false;
        this.refusedAndPassedOn += 1;
      }
    }
  }

  async close(): Promise<void> {
    this.#stopped = true;
    await this.#checking;
  }

  /** The next instance in rotation; while none is, waits as a balancer queues, up to a bound. */
  async #pick(): Promise<Upstream> {
    const deadline = Date.now() + NO_UPSTREAM_MS;
    for (;;) {
      for (let i = 0; i < this.#upstreams.length; i++) {
        const upstream = this.#upstreams[this.#next++ % this.#upstreams.length];
        if (upstream?.ready) return upstream;
      }
      if (Date.now() > deadline) throw new Error(`no gateway ready for ${NO_UPSTREAM_MS} ms`);
      await sleep(this.#checkEveryMs);
    }
  }

  async #checkLoop(): Promise<void> {
    while (!this.#stopped) {
      await Promise.all(this.#upstreams.map((upstream) => this.#check(upstream)));
      await sleep(this.#checkEveryMs);
    }
  }

  async #check(upstream: Upstream): Promise<void> {
    try {
      upstream.ready = (await call(`${upstream.url}/readyz`)).status === 200;
    } catch {
      upstream.ready = false;
    }
  }
}

export function isBroken(outcome: Forwarded | Broken): outcome is Broken {
  return "code" in outcome;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : String(error);
}
