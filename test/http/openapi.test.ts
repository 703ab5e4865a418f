import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orderPaidSchema } from "../../src/domain/validate-order-paid.ts";
import { PROBLEM_TYPE_BASE, problems } from "../../src/errors/catalogue.ts";
import { DOCS_PATH, defComponentName, JSON_MEDIA_TYPE, PROBLEM_MEDIA_TYPE } from "../../src/http/openapi/json.ts";
import type { JsonObject, JsonValue } from "../../src/http/openapi/types.ts";
import { EXAMPLES } from "../../src/http/schemas/examples.ts";
import { appForDocuments } from "../support/app-for-documents.ts";
import {
  documentAjv,
  type OpenApiDocument,
  type OperationObject,
  type ParameterObject,
  type ResponseObject,
} from "./openapi-document.ts";

const readJson = (path: string): JsonObject =>
  JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), "utf8"));

const ORDERS = "/integration/v1/orders/paid";
const ADMIN = "/integration/v1/admin";
const WEBHOOKS = "/integration/v1/webhooks";

/**
 * The world, written down apart from the routes' schemas: what each route can
 * answer, from README "The answer map" and the problem catalogue.
 *
 * Any route: 400 (malformed HTTP, a bad % escape, a header sent twice),
 * 408 (slow request), 417 (Expect), 431 (headers over 16 KiB), 500 (a bug),
 * 501 (CONNECT), 503 (shutting down), 505 (an HTTP version other than 1.x).
 */
const ANY_ROUTE = [400, 408, 417, 431, 500, 501, 503, 505];

/** What a route answers because of what it is: a path parameter, a body, a gate. */
function statusesByTrait(method: string, url: string): number[] {
  return [
    ...ANY_ROUTE,
    ...(url.includes("/:") ? [414] : []), // a path segment over 384 characters
    ...(method === "POST" ? [413, 415] : []), // body limit; not JSON, other charset, a content coding
    ...(url.startsWith(ORDERS) ? [401, 429] : []), // sender token; rate limit per sender, wrong tokens throttled
    ...(url.startsWith(ADMIN) ? [401, 403, 429] : []), // ADMIN_TOKEN missing or wrong; wrong tokens throttled
  ];
}

/** What each route answers of its own. A new route fails the walk until it is added here. */
const OWN_STATUSES: Readonly<Record<string, readonly number[]>> = {
  // 201/200/202 by state; 409 another body; 422 schema, rules, 1C refused; 502 given up; 503 storage.
  [`POST ${ORDERS}`]: [200, 201, 202, 409, 422, 502, 503],
  [`GET ${ORDERS}/:event_id`]: [200, 404],
  [`GET ${ORDERS}/:event_id/attempts`]: [200, 404],
  [`GET ${PROBLEM_TYPE_BASE}:slug`]: [200, 404],
  "GET /healthz": [200],
  "GET /readyz": [200, 503],
  "GET /metrics": [200, 401], // 401 without METRICS_TOKEN where it is required (issue 22, finding 10)
  "GET /openapi.json": [200],
  [`GET ${ADMIN}/events`]: [200],
  // 409 ambiguous event id
  [`GET ${ADMIN}/events/:event_id`]: [200, 404, 409],
  // 409 replay refused or ambiguous
  [`POST ${ADMIN}/events/:event_id/replay`]: [202, 404, 409],
  [`GET ${ADMIN}/webhook-deliveries`]: [200],
  [`GET ${ADMIN}/webhook-deliveries/:id`]: [200, 404],
  // 409 not unmapped, mapped already, or its platform no longer configured; 422 still does not map
  [`POST ${ADMIN}/webhook-deliveries/:id/remap`]: [202, 404, 409, 422],
  // 201/200/202 by state, ignored 200, unmapped 202; 400 not the platform's format; 401 signature;
  // 429 rate limit, bad signatures throttled; 503 storage (docs/platform-webhooks.md, src/http/webhook-answers.ts).
  [`POST ${WEBHOOKS}/shopify/:sender`]: [200, 201, 202, 400, 401, 429, 503],
  [`POST ${WEBHOOKS}/woocommerce/:sender`]: [200, 201, 202, 400, 401, 429, 503],
  // Tilda waits for 200 "ok" whatever was recorded.
  [`POST ${WEBHOOKS}/tilda/:sender/:token`]: [200, 400, 401, 429, 503],
  // A person opening the pasted URL: it exists and takes POST (RFC 9110 §15.5.6).
  [`GET ${WEBHOOKS}/shopify/:sender`]: [405],
  [`GET ${WEBHOOKS}/woocommerce/:sender`]: [405],
  [`GET ${WEBHOOKS}/tilda/:sender/:token`]: [405],
};

/** The app, and every route it registers as Fastify announces them. */
function appForDocs(): { app: FastifyInstance; routes: { method: string; url: string }[] } {
  const app = appForDocuments();
  const routes: { method: string; url: string }[] = [];
  // buildApp registers its route plugins; they load at ready(), after this hook is in place.
  app.addHook("onRoute", (route) => {
    // The console's pages and the API reference page (/docs, Swagger UI, and its files) are for
    // people, not part of the API: hidden from the document. Only they may be: a hidden route
    // anywhere else is still required to be documented.
    const forPeople =
      route.url.startsWith("/console") || route.url === DOCS_PATH || route.url.startsWith(`${DOCS_PATH}/`);
    if (forPeople && (route.schema as { hide?: boolean } | undefined)?.hide === true) return;
    for (const method of [route.method].flat()) {
      // Fastify adds HEAD for every GET by itself; HTTP makes it the GET without a body.
      if (method !== "HEAD") routes.push({ method, url: route.url });
    }
  });
  return { app, routes };
}

/** A problem type as one response lists it. */
interface ListedProblem {
  type: string;
  title: string;
  status: number;
  code: string;
  retryable: boolean;
}

/** Every operation of the document, in its order. */
function operationsOf(document: OpenApiDocument): { method: string; path: string; operation: OperationObject }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, operation]) =>
      operation === undefined ? [] : [{ method, path, operation }],
    ),
  );
}

/** Follows a local `$ref` ("#/components/..."); throws if it does not resolve (RFC 6901 pointer). */
function resolvePointer(document: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith("#/")) throw new Error(`not a local $ref: ${ref}`);
  let node: unknown = document;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) {
      throw new Error(`$ref ${ref} does not resolve`);
    }
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** The problem types a response can carry, read from its problem+json schema. */
function problemsOf(document: OpenApiDocument, response: ResponseObject): ListedProblem[] {
  const schema = response.content?.[PROBLEM_MEDIA_TYPE]?.schema;
  if (schema === undefined) return [];
  const variants = Array.isArray(schema.oneOf) ? (schema.oneOf as JsonValue[]) : [schema];
  return variants.map((variant) => {
    const ref = (variant as JsonObject).$ref;
    const target = typeof ref === "string" ? (resolvePointer(document, ref) as JsonObject) : (variant as JsonObject);
    const props = (target.properties ?? {}) as Record<string, JsonObject>;
    const constOf = (name: string): JsonValue | undefined => props[name]?.const;
    return {
      type: String(constOf("type")),
      title: String(constOf("title")),
      status: Number(constOf("status")),
      code: String(constOf("code")),
      retryable: constOf("retryable") === true,
    };
  });
}

const asDocumentPath = (url: string): string => url.replace(/:([A-Za-z_]+)/g, "{$1}");

let app: FastifyInstance;
let routes: { method: string; url: string }[];
let doc: OpenApiDocument;

beforeAll(async () => {
  ({ app, routes } = appForDocs());
  await app.ready();
  doc = JSON.parse(JSON.stringify(app.swagger())) as OpenApiDocument;
});
afterAll(async () => {
  await app.close();
});

const operations = () => operationsOf(doc);
const postOrderPaid = () => doc.paths[ORDERS]?.post;

/** Every `$ref` in a JSON value, with where it was found. */
function refsIn(value: unknown, at = "#"): { ref: string; at: string }[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => refsIn(item, `${at}/${index}`));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === "$ref" && typeof inner === "string" ? [{ ref: inner, at }] : refsIn(inner, `${at}/${key}`),
  );
}

describe("the routes the gateway registers", () => {
  it("are each in the generated document, with every status the world says they can answer", () => {
    expect(routes.length).toBeGreaterThanOrEqual(11);
    for (const { method, url } of routes) {
      const where = `${method} ${url}`;
      const own = OWN_STATUSES[where];
      expect(own, `${where} is a new route: write what it answers in OWN_STATUSES`).toBeDefined();
      const operation = doc.paths[asDocumentPath(url)]?.[method.toLowerCase() as "get" | "post"];
      expect(operation, `${where} is not in the document`).toBeDefined();
      const documented = new Set(Object.keys(operation?.responses ?? {}).map(Number));
      const expected = new Set([...statusesByTrait(method, url), ...(own ?? [])]);
      expect(
        [...expected].filter((status) => !documented.has(status)),
        `${where}: undocumented statuses`,
      ).toEqual([]);
      expect(
        [...documented].filter((status) => !expected.has(status)),
        `${where}: statuses it cannot answer`,
      ).toEqual([]);
    }
  });

  it("are all the document has", () => {
    const registered = new Set(routes.map(({ method, url }) => `${method.toLowerCase()} ${asDocumentPath(url)}`));
    expect(new Set(operations().map(({ method, path }) => `${method} ${path}`))).toEqual(registered);
  });

  it("put every problem code of the catalogue under some route, at its status, with an example", () => {
    const listed = operations().flatMap(({ method, path, operation }) =>
      Object.entries(operation.responses).flatMap(([status, response]) =>
        problemsOf(doc, response).map((problem) => ({ where: `${method} ${path}`, status, problem, response })),
      ),
    );
    for (const [code, kind] of Object.entries(problems)) {
      const found = listed.filter((entry) => entry.problem.code === code);
      expect(found.length, `${code} is sent by no route: add it to a route's answers`).toBeGreaterThan(0);
      for (const { status, problem, response, where } of found) {
        expect(status, `${code} under ${where}`).toBe(String(kind.status));
        expect(problem).toEqual({
          code,
          type: PROBLEM_TYPE_BASE + kind.slug,
          title: kind.title,
          status: kind.status,
          retryable: kind.retryable,
        });
        const example = response.content?.[PROBLEM_MEDIA_TYPE]?.examples?.[code]?.value as JsonObject | undefined;
        expect(example?.type, `${code} example under ${where}`).toBe(PROBLEM_TYPE_BASE + kind.slug);
      }
    }
  });
});

describe("the generated document", () => {
  it("has the required top-level fields of OpenAPI 3.1", () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.jsonSchemaDialect).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(doc.info.version).toBe(readJson("package.json").version);
    expect(doc.info.description).toContain("Idempotency");
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    for (const path of Object.keys(doc.paths)) expect(path).toMatch(/^\//);
  });

  it("resolves every $ref inside the document", () => {
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(50);
    for (const { ref, at } of refs) expect(() => resolvePointer(doc, ref), `${ref} at ${at}`).not.toThrow();
  });

  it("gives every operation an id, a known tag, known security, its path parameters and described answers", () => {
    const ids = operations().map((op) => op.operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Set(doc.tags.map((tag) => tag.name));
    for (const { method, path, operation } of operations()) {
      const where = `${method} ${path}`;
      expect(operation.summary, where).not.toBe("");
      expect(operation.tags.length, where).toBe(1);
      for (const tag of operation.tags) expect(tags, where).toContain(tag);
      expect(operation.security, where).toBeDefined();
      for (const requirement of operation.security) {
        for (const name of Object.keys(requirement)) expect(doc.components.securitySchemes, where).toHaveProperty(name);
      }
      const params = (operation.parameters ?? []) as ParameterObject[];
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const inPath = params.filter((p) => p.in === "path");
      expect(inPath.map((p) => p.name).sort(), where).toEqual(templated.sort());
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(response.description, `${where} ${status}`).not.toMatch(/^(|Default Response)$/);
        expect(response.headers, `${where} ${status}`).toHaveProperty("X-Correlation-ID");
        expect(Object.keys(response.content ?? {}), `${where} ${status}`).toEqual(
          Number(status) >= 400 ? [PROBLEM_MEDIA_TYPE] : [expect.any(String)],
        );
      }
    }
  });

  it("puts the headers and links on the answers that carry them", () => {
    const post = postOrderPaid();
    const headers = (status: string) => Object.keys(post?.responses[status]?.headers ?? {});
    for (const status of ["200", "201", "202", "409"]) expect(headers(status), status).toContain("Location");
    for (const status of ["200", "201", "422", "502"]) expect(headers(status), status).toContain("Idempotent-Replayed");
    for (const status of ["202", "429", "503"]) expect(headers(status), status).toContain("Retry-After");
    expect(headers("401")).toContain("WWW-Authenticate");
    expect(headers("415")).toContain("Accept-Encoding");
    for (const status of ["200", "201", "202"]) {
      expect(post?.responses[status]?.links?.status?.operationId, status).toBe("getOrderPaidStatus");
    }
    for (const { operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status === "429" || status === "503") expect(Object.keys(response.headers ?? {})).toContain("Retry-After");
      }
    }
    const requestHeaders = ((post?.parameters ?? []) as ParameterObject[]).filter((p) => p.in === "header");
    expect(requestHeaders.map((p) => p.name)).toEqual(["X-Correlation-ID", "Idempotency-Key"]);
  });

  it("compiles every component schema as JSON Schema 2020-12", () => {
    const ajv = documentAjv(doc);
    for (const name of Object.keys(doc.components.schemas)) {
      expect(() => ajv.compile({ $ref: `#/components/schemas/${name}` }), name).not.toThrow();
    }
  });

  it("has examples, made by the real answer functions, that match their schemas", () => {
    const ajv = documentAjv(doc);
    let checked = 0;
    const check = (schema: JsonObject, value: JsonValue, where: string) => {
      const validate = ajv.compile(schema);
      expect(validate(value) ? [] : validate.errors, where).toEqual([]);
      checked += 1;
    };
    for (const { method, path, operation } of operations()) {
      const media = [
        ...Object.entries(operation.requestBody?.content ?? {}).map(([type, m]) => ({ at: `request ${type}`, m })),
        ...Object.entries(operation.responses).flatMap(([status, response]) =>
          Object.entries(response.content ?? {}).map(([type, m]) => ({ at: `${status} ${type}`, m })),
        ),
      ];
      for (const { at, m } of media) {
        if (m.example !== undefined) check(m.schema, m.example, `${method} ${path} ${at} example`);
        for (const [name, example] of Object.entries(m.examples ?? {})) {
          check(m.schema, example.value, `${method} ${path} ${at} example ${name}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(40);
    // The document carries them as made, nothing rewritten on the way.
    const created = postOrderPaid()?.responses["201"]?.content?.[JSON_MEDIA_TYPE]?.examples?.created?.value;
    expect(created).toEqual(EXAMPLES.accepted);
    const detail =
      doc.paths[`${ADMIN}/events/{event_id}`]?.get?.responses["200"]?.content?.[JSON_MEDIA_TYPE]?.examples?.event
        ?.value;
    expect(detail).toEqual(EXAMPLES.adminDetail);
    expect(postOrderPaid()?.requestBody?.content[JSON_MEDIA_TYPE]?.example).toEqual(EXAMPLES.event);
  });

  it("describes the views with exactly the fields the gateway sends", () => {
    const fields = (name: string) => Object.keys((doc.components.schemas[name]?.properties ?? {}) as JsonObject).sort();
    expect(Object.keys(EXAMPLES.statusView).sort()).toEqual(fields("EventStatusView"));
    expect(Object.keys(EXAMPLES.attempts).sort()).toEqual(fields("AttemptsView"));
    expect(Object.keys((EXAMPLES.attempts.attempts as JsonObject[])[0] ?? {}).sort()).toEqual(fields("AttemptView"));
    expect(Object.keys(EXAMPLES.accepted).sort()).toEqual(fields("OrderAccepted"));
  });

  it("works the retry through with answers the POST operation declares", () => {
    const post = postOrderPaid();
    const example = post?.["x-retry-example"];
    expect(example?.steps.map((step) => step.response.status)).toEqual([202, 202, 200, 409]);
    const ajv = documentAjv(doc);
    for (const step of example?.steps ?? []) {
      const response = post?.responses[String(step.response.status)];
      const media = Object.values(response?.content ?? {})[0];
      expect(media, step.title).toBeDefined();
      const validate = ajv.compile(media?.schema ?? {});
      expect(validate(step.response.body) ? [] : validate.errors, step.title).toEqual([]);
      for (const name of Object.keys(step.response.headers)) {
        expect(Object.keys(response?.headers ?? {}), `${step.title}: ${name}`).toContain(name);
      }
    }
  });
});

describe("the order-paid body in the document", () => {
  const requestSchema = () => postOrderPaid()?.requestBody?.content[JSON_MEDIA_TYPE]?.schema ?? {};

  it("accepts schemas/examples/order-paid.json and refuses what the gateway refuses", () => {
    const validate = documentAjv(doc).compile(requestSchema());
    const example = readJson("schemas/examples/order-paid.json");
    expect(validate(example) ? [] : validate.errors).toEqual([]);
    const order = example.order as JsonObject;
    expect(validate({ ...example, order: { ...order, total: 1890 } })).toBe(false);
    expect(validate({ ...example, surprise: true })).toBe(false);
    expect(validate({ ...example, event_id: "has space" })).toBe(false);
  });

  it("is schemas/order-paid.schema.json, the validator's own schema, with $defs moved to components", () => {
    const allOf = requestSchema().allOf as JsonObject[];
    expect(allOf).toEqual([{ $ref: "#/components/schemas/OrderPaidEvent" }]);
    const back = (value: JsonValue): JsonValue => {
      if (Array.isArray(value)) return value.map(back);
      if (typeof value !== "object" || value === null) return value;
      return Object.fromEntries(
        Object.entries(value).map(([key, inner]) => [key, key === "$ref" ? defsRef(inner) : back(inner)]),
      );
    };
    const defNames = Object.keys((orderPaidSchema.$defs ?? {}) as JsonObject);
    const byComponent = new Map(defNames.map((name) => [defComponentName(name), name]));
    const defsRef = (ref: JsonValue) => `#/$defs/${byComponent.get(String(ref).replace("#/components/schemas/", ""))}`;
    const { $schema, $id } = orderPaidSchema;
    const rebuilt = {
      $schema,
      $id,
      ...(back(doc.components.schemas.OrderPaidEvent ?? {}) as JsonObject),
      $defs: Object.fromEntries(
        defNames.map((name) => [name, back(doc.components.schemas[defComponentName(name)] ?? {})]),
      ),
    };
    expect(rebuilt).toEqual(readJson("schemas/order-paid.schema.json"));
    expect(rebuilt).toEqual(orderPaidSchema);
  });
});

describe("GET /openapi.json", () => {
  // GET /docs, the page made from it, is test/http/docs.test.ts and test/browser/docs.test.ts.
  it("serves the generated document as JSON", async () => {
    const answer = await app.inject({ url: "/openapi.json" });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(answer.json()).toEqual(doc);
  });
});
