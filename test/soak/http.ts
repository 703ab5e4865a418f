import { Agent, request } from "undici";

export const ORDERS_PAID = "/integration/v1/orders/paid";

/** What came back from one request: an answer, or why there was none. */
export type Reply =
  | { kind: "answer"; status: number; body: string; retryAfterS: number | undefined }
  /** No answer within the client's patience: the gateway kept the request open too long. */
  | { kind: "unanswered" }
  /** Refused, reset or closed: the gateway was down or died mid-request. */
  | { kind: "connection_error"; code: string };

/**
 * The shop's HTTP side: one keep-alive pool per gateway, a bearer token, and
 * a per-request deadline. undici never retries a POST by itself, so every
 * retry is the client's own and is counted.
 */
export class ShopHttp {
  readonly #agent: Agent;
  readonly #token: string;

  constructor(token: string, requestTimeoutMs: number) {
    this.#token = token;
    // No cap on connections: a burst's requests must all reach the gateways at once, not queue here.
    this.#agent = new Agent({
      headersTimeout: requestTimeoutMs,
      bodyTimeout: requestTimeoutMs,
      connect: { timeout: 2_000 },
    });
  }

  postEvent(baseUrl: string, eventId: string, bytes: Buffer, correlationId: string): Promise<Reply> {
    return this.#call(`${baseUrl}${ORDERS_PAID}`, "POST", bytes, {
      "content-type": "application/json",
      "idempotency-key": eventId,
      "x-correlation-id": correlationId,
    });
  }

  getStatus(baseUrl: string, eventId: string): Promise<Reply> {
    return this.#call(`${baseUrl}${ORDERS_PAID}/${encodeURIComponent(eventId)}`, "GET", undefined, {});
  }

  close(): Promise<void> {
    return this.#agent.close();
  }

  async #call(
    url: string,
    method: "GET" | "POST",
    body: Buffer | undefined,
    headers: Record<string, string>,
  ): Promise<Reply> {
    try {
      const response = await request(url, {
        method,
        body,
        headers: { ...headers, authorization: `Bearer ${this.#token}` },
        dispatcher: this.#agent,
      });
      const text = await response.body.text();
      return { kind: "answer", status: response.statusCode, body: text, retryAfterS: retryAfter(response.headers) };
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") return { kind: "unanswered" };
      return { kind: "connection_error", code: typeof code === "string" ? code : String(error) };
    }
  }
}

function retryAfter(headers: Record<string, string | string[] | undefined>): number | undefined {
  const value = headers["retry-after"];
  const seconds = Number(Array.isArray(value) ? value[0] : value);
  return value !== undefined && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}
