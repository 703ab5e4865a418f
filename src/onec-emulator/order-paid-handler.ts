import { createHash } from "node:crypto";
import type { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { isValidKey, KEY_MAX_LENGTH } from "../onec/contract/key.ts";
import { type Credentials, requireAuth } from "./auth.ts";
import { currencyRefusal } from "./currency.ts";
import type { EmulatorFaults } from "./faults.ts";
import { headerValue, isJsonMediaType, sendError, sendJson, sendProcessingError } from "./http-io.ts";
import type { KeyLocks } from "./key-locks.ts";
import { readSkus } from "./order-event.ts";
import { decodeJson, readBody } from "./request-body.ts";
import type { OrderStore } from "./store.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

export interface OrderPaidContext {
  readonly store: OrderStore;
  readonly credentials: Credentials | undefined;
  readonly events: EventEmitter;
  /** Aborted by close(), so a request waiting out its latency does not keep the process alive. */
  readonly closing: AbortSignal;
  /** Read afresh at each step, so a test can flip a fault while a request is in flight. */
  faults(): EmulatorFaults;
  /** Calls held open by hangAfterCommit right now, by key: what a kill of the caller would cut. */
  readonly hanging: HangingCalls;
  /** The keys' locks, held while an order posts (faults.postingMs). */
  readonly locks: KeyLocks;
}

type SubmitResult = ReturnType<OrderStore["submit"]>;

/**
 * The store's verdict on a new order, with the refusals and failures the faults switch on. As in 1C, the
 * currency is checked after the articles (the store's own check) and before the order posts (ORDER_NOT_VALID);
 * it also comes before a staged `refusal`, which stands for causes found before or after it.
 */
function submit(ctx: OrderPaidContext, request: Parameters<OrderStore["submit"]>[0]): SubmitResult {
  const { knownSkus, orderNotValid, refusal, processingError, agreementCurrency } = ctx.faults();
  const currency = currencyRefusal(agreementCurrency, request.booking?.currency ?? null);
  return ctx.store.submit(request, knownSkus, {
    refusal:
      currency ??
      (orderNotValid !== null
        ? { code: "ORDER_NOT_VALID", message: `1C refused to post ЗаказКлиента: ${orderNotValid}` }
        : refusal),
    failure: processingError,
  });
}

/** False when the emulator closed during the wait. */
async function waited(ms: number, closing: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal: closing });
    return true;
  } catch {
    return false;
  }
}

/** A multiset of keys: a stale attempt and its successor may hang on the same key at once. */
export class HangingCalls {
  readonly #byKey = new Map<string, number>();

  hold(key: string, res: ServerResponse): void {
    this.#byKey.set(key, (this.#byKey.get(key) ?? 0) + 1);
    res.once("close", () => {
      const left = (this.#byKey.get(key) ?? 1) - 1;
      if (left === 0) this.#byKey.delete(key);
      else this.#byKey.set(key, left);
    });
  }

  keys(): string[] {
    return [...this.#byKey.keys()];
  }
}

export interface PostReceived {
  key: string | undefined;
  correlationId: string;
  /** The W3C `traceparent` and `tracestate` headers as received, for tests of trace propagation; absent when not sent. */
  traceparent?: string;
  tracestate?: string;
}

function traceHeaders(req: IncomingMessage): Pick<PostReceived, "traceparent" | "tracestate"> {
  const traceparent = headerValue(req, "traceparent");
  const tracestate = headerValue(req, "tracestate");
  return {
    ...(traceparent === undefined ? {} : { traceparent }),
    ...(tracestate === undefined ? {} : { tracestate }),
  };
}

/** POST /v1/orders/paid. The step order is part of the contract: see the fault descriptions. */
export async function handleOrderPaid(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: OrderPaidContext,
  correlationId: string,
): Promise<void> {
  const rawKey = headerValue(req, "idempotency-key");
  const received: PostReceived = { key: rawKey, correlationId, ...traceHeaders(req) };
  ctx.events.emit("post", received);

  if (!requireAuth(req, res, ctx.credentials)) return;
  if (ctx.faults().dropConnection) {
    req.socket.destroy();
    return;
  }
  const latencyMs = ctx.faults().latencyMs;
  if (latencyMs > 0) {
    try {
      await sleep(latencyMs, undefined, { signal: ctx.closing });
    } catch {
      return;
    }
  }
  const { unavailable, maintenance, retryAfterSeconds } = ctx.faults();
  if (maintenance) {
    sendError(res, 503, "MAINTENANCE", "1C is in maintenance mode, retry later", {
      "retry-after": String(retryAfterSeconds),
    });
    return;
  }
  if (unavailable) {
    sendError(res, 503, "UNAVAILABLE", "1C is temporarily unavailable", { "retry-after": String(retryAfterSeconds) });
    return;
  }

  if (!isJsonMediaType(req.headers["content-type"])) {
    sendError(res, 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json");
    return;
  }
  const body = await readBody(req, MAX_BODY_BYTES);
  if (body.kind === "too_large") {
    // The rest of the body is still on the wire; closing is cheaper than draining it.
    sendError(res, 413, "PAYLOAD_TOO_LARGE", `body exceeds ${MAX_BODY_BYTES} bytes`, { connection: "close" });
    return;
  }
  const json = decodeJson(body.bytes);
  if (!json.ok) {
    sendError(res, 400, "BAD_JSON", json.message);
    return;
  }
  if (rawKey === undefined || rawKey === "") {
    sendError(res, 400, "MISSING_IDEMPOTENCY_KEY", "Idempotency-Key header is required");
    return;
  }
  // The same key must reach GET /v1/events/{key} as it is: no "/", no "%" (contract 2).
  if (!isValidKey(rawKey)) {
    sendError(
      res,
      400,
      "BAD_IDEMPOTENCY_KEY",
      `Idempotency-Key must be 1..${KEY_MAX_LENGTH} characters of A-Z a-z 0-9 . _ : ~ -`,
    );
    return;
  }
  const skus = readSkus(json.value);
  if (!skus.ok) {
    sendError(res, 400, "BAD_EVENT", skus.message);
    return;
  }

  const hash = createHash("sha256").update(body.bytes).digest("hex");
  // Posting holds the key: another POST of it waits its turn, and a GET of it waits for the commit.
  // 1C's lock is on the register's key value, which it compares without regard to case.
  const release = await ctx.locks.acquire(rawKey.toLowerCase());
  let result: SubmitResult;
  try {
    const { postingMs } = ctx.faults();
    // A key with its order already reads it and answers: only a new order takes time to post.
    const posts = ctx.store.get(rawKey) === undefined;
    ctx.events.emit("posting", rawKey);
    if (posts && postingMs > 0 && !(await waited(postingMs, ctx.closing))) return;
    result = submit(ctx, { key: rawKey, hash, correlationId, skus: skus.skus, booking: skus.booking });
  } finally {
    release();
  }
  switch (result.kind) {
    case "unknown_sku":
      sendError(res, 422, "UNKNOWN_SKU", `unknown article: ${result.sku}`);
      return;
    case "refused":
      sendJson(res, 422, { error: result.refusal });
      return;
    case "failed":
      sendProcessingError(res, result.message);
      return;
    case "case_conflict":
      sendError(
        res,
        409,
        "EVENT_ID_REUSED",
        `Idempotency-Key ${rawKey} differs only in letter case from ${result.record.key}, which 1C already holds (1C compares keys without regard to case): send this event under another event_id`,
      );
      return;
    case "conflict":
      sendError(
        res,
        409,
        "EVENT_ID_REUSED",
        `Idempotency-Key ${rawKey} was already used with a different body (order ${result.record.order.number})`,
      );
      return;
    case "created":
      ctx.events.emit("committed", result.record);
      break;
    case "replayed":
      break;
  }
  // Leaving the response open is the point: the order exists, the caller never learns it.
  // close() destroys the socket.
  if (ctx.faults().hangAfterCommit) {
    ctx.hanging.hold(rawKey, res);
    return;
  }
  sendJson(res, result.kind === "created" ? 201 : 200, { order: result.record.order });
}
