import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from "fastify";
import { traceIdOf } from "../observability/trace-context.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Set by handlers that know it, for the request's one log line. */
    logEvent: { eventId?: string; eventStatus?: string } | undefined;
  }
}

const CORRELATION_LABEL = "correlation_id";

/**
 * One line per request instead of Fastify's two: pino is fast because it
 * writes little. That line carries the correlation id, the client's address
 * (request.ip: behind TRUST_PROXY, what the proxy saw), the sender or the
 * operator, the event and the answer, so a request is found by any of them.
 * For an admin read or a console page it is the audit line: who, from where, what.
 *
 * The logger's redaction paths (customer data nested in objects) can never
 * match the line's fields, all of them strings and numbers, yet with a
 * wildcard path pino passes every field through the redactor, which costs as
 * much as the rest of the line. So a line that went well is written by a
 * child of the same logger without redaction, with the correlation id as the
 * request's own logger would bind it: the same bytes, at half the cost. A
 * line with an error keeps the request's logger and its redaction: an error
 * may carry anything.
 */
export class RequestLog extends LogController {
  /** Per root logger: its child without redaction. */
  readonly #plain = new WeakMap<FastifyBaseLogger, FastifyBaseLogger>();

  constructor() {
    super({ requestIdLogLabel: CORRELATION_LABEL });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const fields = {
      method: request.method,
      url: withoutUrlSecret(request.url),
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      client_ip: request.ip,
      sender: request.sender,
      operator: request.principal?.name ?? request.consoleUser?.principal.name,
      event_id: request.logEvent?.eventId,
      event_status: request.logEvent?.eventStatus,
      // Links the correlation id to the trace in the operators' tracing system.
      trace_id: request.trace === undefined ? undefined : traceIdOf(request.trace.context),
    };
    if (error) {
      reply.log.error({ ...fields, err: error }, "request errored");
      return;
    }
    const plain = this.#plainLogger(request.server.log);
    // Only where it would log exactly as the request's logger: same level (a route may set its own).
    if (plain.level === reply.log.level)
      plain.info({ [CORRELATION_LABEL]: request.id, ...fields }, "request completed");
    else reply.log.info(fields, "request completed");
  }

  #plainLogger(root: FastifyBaseLogger): FastifyBaseLogger {
    let plain = this.#plain.get(root);
    if (plain === undefined) {
      plain = root.child({}, { redact: [] });
      this.#plain.set(root, plain);
    }
    return plain;
  }
}

/**
 * Tilda's webhook URL ends in the sender's secret (routes/webhooks.ts): logged as `<secret>`, on
 * every request to that path, matched or not (a GET opened in a browser is a 404 with the same URL),
 * and by every line that logs a URL: the router's refusals (problem-handler.ts) and those Node
 * answers before Fastify (client-error.ts) too. A URL pasted a little wrong is a 404 that still holds
 * the secret: the path is found in any case and after any prefix (`//integration/…`), everything
 * after the sender's segment is the secret, and a lone segment is too (the secret pasted without the
 * sender). The query, which Tilda never puts the secret in, stays.
 */
export function withoutUrlSecret(url: string): string {
  const at = url.toLowerCase().indexOf(TILDA_PATH);
  if (at === -1) return url;
  const start = at + TILDA_PATH.length;
  const query = url.indexOf("?", start);
  const end = query === -1 ? url.length : query;
  const slash = url.indexOf("/", start);
  const from = slash !== -1 && slash < end - 1 ? slash + 1 : start;
  return from >= end ? url : `${url.slice(0, from)}<secret>${url.slice(end)}`;
}

const TILDA_PATH = "/webhooks/tilda/";
