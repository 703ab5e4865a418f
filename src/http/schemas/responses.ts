import { STATUS_CODES } from "node:http";
import { type ProblemCode, problems } from "../../errors/catalogue.ts";
import { JSON_MEDIA_TYPE, PROBLEM_MEDIA_TYPE, schemaRef } from "../openapi/json.ts";
import type { JsonObject } from "../openapi/types.ts";
import { EXAMPLES, problemExample } from "./examples.ts";

/**
 * Building blocks of the routes' `schema.response`: Fastify keeps them on the
 * route, @fastify/swagger turns them into the document's answers. They only
 * describe: the routes send pre-stringified JSON, and app.ts serializes any
 * object with JSON.stringify, so no response schema changes a byte that is sent.
 */

/** A response header as a route declares it: a JSON Schema with a description. */
type HeaderSchema = JsonObject & { readonly description: string };

export const HEADERS = {
  "X-Correlation-ID": {
    description:
      "On every answer: the sender's X-Correlation-ID if it was valid, else a UUID the gateway made. Quote it to support.",
    type: "string",
    maxLength: 128,
  },
  "Accept-Encoding": {
    description:
      "On a 415 for a body sent with a `Content-Encoding`: the codings the gateway reads, only `identity` (RFC 9110 §15.5.16).",
    type: "string",
    const: "identity",
  },
  Location: { description: "The event's status URL.", type: "string", format: "uri-reference" },
  "Idempotent-Replayed": {
    description: "`false` on the answer that finished the event, `true` on every repeat of it.",
    type: "string",
    enum: ["true", "false"],
  },
  "Retry-After": {
    description: "Seconds to wait before sending the same request again.",
    type: "string",
    pattern: "^[0-9]+$",
  },
  "WWW-Authenticate": { description: "The bearer challenge of a 401.", type: "string" },
  Allow: { description: "The methods the URL takes.", type: "string" },
  "X-RateLimit-Limit": {
    description:
      "Requests a sender may make per window. Sent by the senders' order routes, while rate limiting is on, on every answer to a request counted against the sender's limit (once its token is checked); never by the webhook routes.",
    type: "string",
    pattern: "^[0-9]+$",
  },
  "X-RateLimit-Remaining": { description: "Requests left in this window.", type: "string", pattern: "^[0-9]+$" },
  "X-RateLimit-Reset": { description: "Seconds until the window resets.", type: "string", pattern: "^[0-9]+$" },
} satisfies Record<string, HeaderSchema>;

export type HeaderName = keyof typeof HEADERS;

/** A header as one answer carries it; `description` narrows the general one. */
export function header(name: HeaderName, description?: string): HeaderSchema {
  return description === undefined ? HEADERS[name] : { ...HEADERS[name], description };
}

/** Response headers a problem carries besides X-Correlation-ID. */
const PROBLEM_HEADERS: Readonly<Partial<Record<ProblemCode, readonly HeaderName[]>>> = {
  GW_ERR_UNSUPPORTED_MEDIA_TYPE: ["Accept-Encoding"],
  GW_ERR_EVENT_ID_CONFLICT: ["Location"],
  GW_ERR_REPLAY_REFUSED: ["Location"],
  GW_ERR_ONEC_REJECTED: ["Location", "Idempotent-Replayed"],
  GW_ERR_ONEC_CONFLICT: ["Location", "Idempotent-Replayed"],
  GW_ERR_DELIVERY_ABANDONED: ["Location", "Idempotent-Replayed"],
  GW_ERR_UNAUTHORIZED: ["WWW-Authenticate"],
  GW_ERR_METHOD_NOT_ALLOWED: ["Allow"],
  GW_ERR_RATE_LIMITED: ["Retry-After"],
  GW_ERR_STORAGE_UNAVAILABLE: ["Retry-After"],
  GW_ERR_SHUTTING_DOWN: ["Retry-After"],
  GW_ERR_AUTH_THROTTLED: ["Retry-After"],
};

/**
 * Any route: Node's HTTP parser (malformed request, a bad % escape or a
 * header that must come once sent twice: 400; slow request 408; an Expect
 * other than 100-continue 417; headers over 16 KiB 431; CONNECT 501; an HTTP
 * version other than 1.x 505), a bug (500), and a request that arrives while
 * the gateway closes (503 + Retry-After).
 */
export const EVERY_ROUTE = [
  "GW_ERR_BAD_REQUEST",
  "GW_ERR_REQUEST_TIMEOUT",
  "GW_ERR_EXPECTATION_FAILED",
  "GW_ERR_HEADERS_TOO_LARGE",
  "GW_ERR_INTERNAL",
  "GW_ERR_METHOD_NOT_IMPLEMENTED",
  "GW_ERR_HTTP_VERSION_NOT_SUPPORTED",
  "GW_ERR_SHUTTING_DOWN",
] as const satisfies readonly ProblemCode[];

/** A route with a path parameter: a segment over the router's limit is 414. */
export const PATH_PARAMETER = ["GW_ERR_URI_TOO_LONG"] as const satisfies readonly ProblemCode[];

/** The senders' routes: bearer token per sender, rate limit per sender, wrong tokens throttled. */
export const SENDER_GATE = [
  "GW_ERR_UNAUTHORIZED",
  "GW_ERR_RATE_LIMITED",
  "GW_ERR_AUTH_THROTTLED",
] as const satisfies readonly ProblemCode[];

/** The admin routes: no token (401), a token that is nobody's, or a role without the right (403), wrong tokens throttled (429). */
export const ADMIN_GATE = [
  "GW_ERR_UNAUTHORIZED",
  "GW_ERR_FORBIDDEN",
  "GW_ERR_AUTH_THROTTLED",
] as const satisfies readonly ProblemCode[];

/** A route with a JSON body goes through the strict JSON parser and the body limit. */
export const JSON_BODY = [
  "GW_ERR_INVALID_JSON",
  "GW_ERR_DUPLICATE_JSON_KEY",
  "GW_ERR_BODY_TOO_LARGE",
  "GW_ERR_UNSUPPORTED_MEDIA_TYPE",
] as const satisfies readonly ProblemCode[];

/**
 * The senders' order routes' rate limit (sender-rate-limit.ts limitSenderRate)
 * sends these on every answer to a request it counted. The webhooks' limit,
 * charged by hand once a signature verified, sends only Retry-After on its 429.
 */
const SENDER_RATE_HEADERS = [
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
] as const satisfies readonly HeaderName[];

/**
 * Problems answered before the sender's rate limit counts the request (its
 * preParsing hook): by Node's HTTP parser, the router, or an onRequest hook
 * (shutting down, HTTP version, the sender's token and its throttle). They
 * carry no X-RateLimit-*.
 */
const BEFORE_THE_COUNT: ReadonlySet<ProblemCode> = new Set<ProblemCode>([
  ...EVERY_ROUTE,
  ...PATH_PARAMETER,
  "GW_ERR_UNAUTHORIZED",
  "GW_ERR_AUTH_THROTTLED",
]);

/** What a route adds to every answer of its own. */
export interface RouteTraits {
  /** The route is behind the senders' rate limit, which reports the sender's budget in X-RateLimit-* headers. */
  readonly senderRateLimit?: boolean;
}

/** The headers a problem carries on a route: its own, and the route's. */
function problemHeaders(code: ProblemCode, traits: RouteTraits): readonly HeaderName[] {
  const own = PROBLEM_HEADERS[code] ?? [];
  return traits.senderRateLimit === true && !BEFORE_THE_COUNT.has(code) ? [...own, ...SENDER_RATE_HEADERS] : own;
}

interface Example {
  readonly summary?: string;
  readonly description?: string;
  readonly value: unknown;
}

export interface ResponseSchema {
  readonly description: string;
  readonly headers: Readonly<Record<string, HeaderSchema>>;
  readonly content: Readonly<
    Record<string, { readonly schema: JsonObject; readonly examples?: Record<string, Example> }>
  >;
}

/** A success answer: its media type, the component schema of its body, its headers and examples. */
export function success(
  description: string,
  body: { schema: string | JsonObject; mediaType?: string; examples?: Record<string, Example> },
  headers: Partial<Record<HeaderName, HeaderSchema>> = {},
): ResponseSchema {
  const schema = typeof body.schema === "string" ? schemaRef(body.schema) : body.schema;
  return {
    description,
    headers: { "X-Correlation-ID": HEADERS["X-Correlation-ID"], ...headers },
    content: {
      [body.mediaType ?? JSON_MEDIA_TYPE]: {
        schema,
        ...(body.examples === undefined ? {} : { examples: body.examples }),
      },
    },
  };
}

/** The problem answers of a route: one per status, every problem type it can carry, each with an example. */
function problemResponses(codes: readonly ProblemCode[], traits: RouteTraits): Record<number, ResponseSchema> {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of new Set(codes)) {
    const { status } = problems[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<number, ResponseSchema> = {};
  for (const [status, group] of byStatus) {
    const slugs = (list: readonly ProblemCode[]) => list.map((code) => `\`${problems[code].slug}\``).join(", ");
    const headers: Record<string, HeaderSchema> = { "X-Correlation-ID": HEADERS["X-Correlation-ID"] };
    for (const name of new Set(group.flatMap((code) => problemHeaders(code, traits)))) {
      const carriers = group.filter((code) => problemHeaders(code, traits).includes(name));
      headers[name] =
        carriers.length === group.length
          ? header(name)
          : header(name, `${HEADERS[name].description} Sent with ${slugs(carriers)}.`);
    }
    const examples: Record<string, Example> = {};
    for (const code of group) {
      const kind = problems[code];
      examples[code] = {
        summary: `${kind.slug}: ${kind.title}`,
        value: EXAMPLES.problems[code] ?? problemExample(code, problems, kind.title),
      };
    }
    const refs = group.map(schemaRef);
    responses[status] = {
      description: `${STATUS_CODES[status] ?? "Error"}: ${group.map((code) => problems[code].title).join("; ")}.`,
      headers,
      content: {
        [PROBLEM_MEDIA_TYPE]: {
          schema: refs.length === 1 && refs[0] !== undefined ? refs[0] : { oneOf: refs },
          examples,
        },
      },
    };
  }
  return responses;
}

/**
 * A route's `schema.response`: its success answers and every problem it can
 * answer with, ordered by status, each with the headers the route's traits
 * add. A status that is both is a mistake.
 */
export function answers(
  successes: Readonly<Record<number, ResponseSchema>>,
  codes: readonly ProblemCode[],
  traits: RouteTraits = {},
): Record<number, ResponseSchema> {
  const routeHeaders: Partial<Record<HeaderName, HeaderSchema>> =
    traits.senderRateLimit === true ? Object.fromEntries(SENDER_RATE_HEADERS.map((name) => [name, HEADERS[name]])) : {};
  const all: Record<number, ResponseSchema> = Object.fromEntries(
    Object.entries(successes).map(([status, response]) => [
      status,
      { ...response, headers: { ...response.headers, ...routeHeaders } },
    ]),
  );
  for (const [status, response] of Object.entries(problemResponses(codes, traits))) {
    if (status in all) throw new Error(`${status} is both a success and a problem`);
    all[Number(status)] = response;
  }
  return Object.fromEntries(Object.entries(all).sort(([a], [b]) => Number(a) - Number(b)));
}
