import { Agent, type Dispatcher, request } from "undici";
import type { TraceContext } from "../observability/trace-context.ts";
import { deadline } from "../util/deadline.ts";
import {
  classifyError,
  classifyLookup,
  classifyLookupError,
  classifyResponse,
  GatewayStoppingError,
} from "./classify-response.ts";
import { keyPathSegment } from "./contract/key.ts";
import type { OnecEventLookup, OnecOutcome } from "./outcome.ts";

export interface OnecClientOptions {
  /** Base URL of the 1C HTTP service, e.g. http://1c.local/base/hs/integration */
  baseUrl: string;
  user?: string | undefined;
  password?: string | undefined;
  /** Whole-call deadline, on our own timer: undici's own timers tick at ~1 s. */
  timeoutMs: number;
  /** Tests inject a MockAgent here. */
  dispatcher?: Dispatcher;
  maxConnections?: number;
}

export interface OrderPaidDelivery {
  /** Unique across senders: 1C deduplicates on it. */
  idempotencyKey: string;
  /** The canonical bytes accepted from the sender, identical on every attempt. */
  body: string;
  correlationId: string;
  /** The attempt's W3C trace context: sent as `traceparent` (and `tracestate`), so 1C's own spans join the shop's trace. */
  trace?: TraceContext | undefined;
}

const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Speaks the 1C contract and nothing else: one POST, one classified outcome.
 * It never retries; the one place that decides retries is the delivery policy.
 */
export class OnecClient {
  readonly #base: string;
  readonly #url: string;
  readonly #auth: string | undefined;
  readonly #timeoutMs: number;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  /** Aborted by abortCalls(): the calls in flight end at once, as GatewayStoppingError. */
  readonly #stopping = new AbortController();
  #closing: Promise<void> | undefined;

  constructor(options: OnecClientOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#url = `${this.#base}/v1/orders/paid`;
    this.#auth =
      options.user !== undefined && options.user !== ""
        ? `Basic ${Buffer.from(`${options.user}:${options.password ?? ""}`, "utf8").toString("base64")}`
        : undefined;
    this.#timeoutMs = options.timeoutMs;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({ connections: options.maxConnections ?? 16, keepAliveTimeout: 10_000, pipelining: 1 });
  }

  async sendOrderPaid(delivery: OrderPaidDelivery): Promise<OnecOutcome> {
    const headers: Record<string, string> = {
      "content-type": "application/json; charset=utf-8",
      accept: "application/json",
      "x-correlation-id": delivery.correlationId,
      "idempotency-key": delivery.idempotencyKey,
    };
    if (this.#auth !== undefined) headers.authorization = this.#auth;
    if (delivery.trace !== undefined) addTraceHeaders(headers, delivery.trace);
    const timeout = deadline(this.#timeoutMs, this.#stopping.signal);
    try {
      const response = await request(this.#url, {
        method: "POST",
        headers,
        body: delivery.body,
        dispatcher: this.#dispatcher,
        signal: timeout.signal,
      });
      const text = await readLimited(response.body, MAX_ANSWER_BYTES);
      const retryAfter = response.headers["retry-after"];
      return classifyResponse(response.statusCode, text, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
    } catch (error) {
      return classifyError(error);
    } finally {
      timeout.clear();
    }
  }

  /**
   * Asks 1C what it holds under a key: GET /v1/events/{key}, same credentials and deadline. The key
   * goes into the path as it is (its alphabet needs no escape, see contract/key.ts).
   */
  async lookUpEvent(idempotencyKey: string, correlationId: string, trace?: TraceContext): Promise<OnecEventLookup> {
    const headers: Record<string, string> = { accept: "application/json", "x-correlation-id": correlationId };
    if (this.#auth !== undefined) headers.authorization = this.#auth;
    if (trace !== undefined) addTraceHeaders(headers, trace);
    const timeout = deadline(this.#timeoutMs, this.#stopping.signal);
    try {
      const response = await request(`${this.#base}/v1/events/${keyPathSegment(idempotencyKey)}`, {
        method: "GET",
        headers,
        dispatcher: this.#dispatcher,
        signal: timeout.signal,
      });
      return classifyLookup(response.statusCode, await readLimited(response.body, MAX_ANSWER_BYTES));
    } catch (error) {
      return classifyLookupError(error);
    } finally {
      timeout.clear();
    }
  }

  /**
   * Ends every call in flight now, and any made later at once: the process is
   * stopping and cannot wait for them. Each ends as a retryable outcome of
   * class `gateway_stopping` (1C may have taken the order; the next attempt's
   * POST gets it back).
   */
  abortCalls(): void {
    this.#stopping.abort(new GatewayStoppingError());
  }

  /** Idempotent: undici rejects a second close() of one dispatcher. */
  close(): Promise<void> {
    if (!this.#ownsDispatcher) return Promise.resolve();
    this.#closing ??= this.#dispatcher.close().then(() => undefined);
    return this.#closing;
  }
}

function addTraceHeaders(headers: Record<string, string>, trace: TraceContext): void {
  headers.traceparent = trace.traceparent;
  if (trace.tracestate !== undefined) headers.tracestate = trace.tracestate;
}

async function readLimited(body: Dispatcher.ResponseData["body"], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) {
      body.destroy();
      break;
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
