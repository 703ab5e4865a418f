import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orderPaidSchema } from "../../src/domain/validate-order-paid.ts";
import { PROBLEM_TYPE_BASE, problems } from "../../src/errors/catalogue.ts";
import { ANSWER_TABLE } from "../../src/http/openapi/answer-table.ts";
import { buildOpenApi, loadOpenApiSources } from "../../src/http/openapi/build-openapi.ts";
import { defComponentName, JSON_MEDIA_TYPE, PROBLEM_MEDIA_TYPE } from "../../src/http/openapi/json.ts";
import { operationsOf, problemsOf, resolvePointer } from "../../src/http/openapi/render-docs.ts";
import type { JsonObject, JsonValue, ParameterObject, Ref } from "../../src/http/openapi/types.ts";
import { adminRoutes } from "../../src/http/routes/admin.ts";
import { DOCS_CSP, docsRoutes } from "../../src/http/routes/docs.ts";
import { healthRoutes } from "../../src/http/routes/health.ts";
import { metricsRoutes } from "../../src/http/routes/metrics.ts";
import { type OrderPaidRoutesOptions, orderPaidRoutes } from "../../src/http/routes/order-paid.ts";
import { problemTypeRoutes } from "../../src/http/routes/problem-types.ts";
import type { GatewayMetrics } from "../../src/observability/metrics.ts";
import type { EventRegister } from "../../src/register/port.ts";
import { call } from "../support/http.ts";

const addFormats = addFormatsModule.default;
const root = new URL("../../", import.meta.url);
const readJson = (path: string): JsonObject => JSON.parse(readFileSync(new URL(path, root), "utf8"));

const doc = buildOpenApi();
const operations = operationsOf(doc);
const postOrderPaid = doc.paths["/integration/v1/orders/paid"]?.post;

/** Every `$ref` in a JSON value, with where it was found. */
function refsIn(value: unknown, at = "#"): { ref: string; at: string }[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => refsIn(item, `${at}/${index}`));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === "$ref" && typeof inner === "string" ? [{ ref: inner, at }] : refsIn(inner, `${at}/${key}`),
  );
}

const COMPONENTS_BASE = "https://openapi.invalid/components/schemas/";

/** A schema from the document with its refs pointing at the component schemas as Ajv knows them. */
function rebased(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(rebased);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === "$ref" && typeof inner === "string" && inner.startsWith("#/components/schemas/")
        ? COMPONENTS_BASE + inner.slice("#/components/schemas/".length)
        : rebased(inner),
    ]),
  );
}

/** Strict Ajv 2020-12 that knows every component schema of the document. */
function documentAjv(): { compile: (schema: JsonValue) => ValidateFunction } {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats(ajv);
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    ajv.addSchema(rebased(schema) as JsonObject, COMPONENTS_BASE + name);
  }
  return { compile: (schema) => ajv.compile(rebased(schema) as JsonObject) };
}

describe("the OpenAPI document", () => {
  it("has the required top-level fields of OpenAPI 3.1", () => {
    const pkg = readJson("package.json");
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).not.toBe("");
    expect(doc.info.version).toBe(pkg.version);
    expect(doc.info.description).toContain("Idempotency");
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
    for (const path of Object.keys(doc.paths)) expect(path).toMatch(/^\//);
    for (const section of Object.values(doc.components)) {
      for (const name of Object.keys(section)) expect(name).toMatch(/^[a-zA-Z0-9._-]+$/);
    }
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it("resolves every $ref inside the document", () => {
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(50);
    for (const { ref, at } of refs) {
      expect(() => resolvePointer(doc, ref), `${ref} at ${at}`).not.toThrow();
    }
  });

  it("gives every operation an id, its path parameters, known security and described answers", () => {
    const ids = operations.map((op) => op.operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(Object.keys(ANSWER_TABLE)));
    const tags = new Set(doc.tags.map((tag) => tag.name));
    for (const { method, path, operation } of operations) {
      const where = `${method} ${path}`;
      expect(
        operation.tags.every((tag) => tags.has(tag)),
        where,
      ).toBe(true);
      for (const requirement of operation.security) {
        for (const name of Object.keys(requirement)) expect(doc.components.securitySchemes, where).toHaveProperty(name);
      }
      const params = (operation.parameters ?? []).map((p) =>
        "$ref" in p ? (resolvePointer(doc, (p as Ref).$ref) as ParameterObject) : p,
      );
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const inPath = params.filter((p) => p.in === "path");
      expect(inPath.map((p) => p.name).sort(), where).toEqual(templated.sort());
      expect(inPath.every((p) => p.required)).toBe(true);

      const responses = Object.entries(operation.responses);
      expect(responses.length, where).toBeGreaterThan(0);
      for (const [status, response] of responses) {
        expect(status, where).toMatch(/^[1-5][0-9]{2}$/);
        expect(response.description, `${where} ${status}`).not.toBe("");
        expect(response.headers, `${where} ${status}`).toHaveProperty("X-Correlation-ID");
        const media = Object.keys(response.content ?? {});
        expect(media, `${where} ${status}`).toEqual(
          Number(status) >= 400 ? [PROBLEM_MEDIA_TYPE] : [expect.any(String)],
        );
      }
    }
  });

  it("compiles every component schema as JSON Schema 2020-12", () => {
    const ajv = documentAjv();
    for (const name of Object.keys(doc.components.schemas)) {
      expect(() => ajv.compile({ $ref: `#/components/schemas/${name}` }), name).not.toThrow();
    }
  });

  it("has examples that match their schemas", () => {
    const ajv = documentAjv();
    let checked = 0;
    const check = (schema: JsonObject, value: JsonValue, where: string) => {
      const validate = ajv.compile(schema);
      expect(validate(value) ? [] : validate.errors, where).toEqual([]);
      checked += 1;
    };
    for (const { method, path, operation } of operations) {
      const media = [
        ...Object.entries(operation.requestBody?.content ?? {}).map(([type, m]) => ({ at: `request ${type}`, m })),
        ...Object.entries(operation.responses).flatMap(([status, response]) =>
          Object.entries(response.content ?? {}).map(([type, m]) => ({ at: `${status} ${type}`, m })),
        ),
      ];
      for (const { at, m } of media) {
        for (const [name, example] of Object.entries(m.examples ?? {})) {
          check(m.schema, example.value, `${method} ${path} ${at} example ${name}`);
        }
      }
    }
    for (const [name, parameter] of Object.entries(doc.components.parameters)) {
      if (parameter.example !== undefined) check(parameter.schema, parameter.example, `parameter ${name}`);
    }
    for (const [name, header] of Object.entries(doc.components.headers)) {
      if (header.example !== undefined) check(header.schema, header.example, `header ${name}`);
    }
    expect(checked).toBeGreaterThan(40);
  });

  it("describes the views with exactly the fields the gateway sends", () => {
    const fields = (name: string) => Object.keys((doc.components.schemas[name]?.properties ?? {}) as JsonObject).sort();
    const example = (path: string, status: string, name: string) => {
      const op = doc.paths[path]?.get;
      const value = op?.responses[status]?.content?.[JSON_MEDIA_TYPE]?.examples?.[name]?.value as JsonObject;
      return value;
    };
    const status = example("/integration/v1/orders/paid/{event_id}", "200", "succeeded");
    expect(Object.keys(status).sort()).toEqual(fields("EventStatusView"));
    const attempts = example("/integration/v1/orders/paid/{event_id}/attempts", "200", "retried-then-delivered");
    expect(Object.keys(attempts).sort()).toEqual(fields("AttemptsView"));
    expect(Object.keys((attempts.attempts as JsonObject[])[0] ?? {}).sort()).toEqual(fields("AttemptView"));
    const created = postOrderPaid?.responses["201"]?.content?.[JSON_MEDIA_TYPE]?.examples?.created?.value as JsonObject;
    expect(Object.keys(created).sort()).toEqual(fields("OrderAccepted"));
  });
});

describe("the answer map in the document", () => {
  it("lists every problem code of the catalogue under an operation, with its status and type", () => {
    const listed = operations.flatMap(({ method, path, operation }) =>
      Object.entries(operation.responses).flatMap(([status, response]) =>
        problemsOf(doc, response).map((problem) => ({ where: `${method} ${path}`, status, problem, response })),
      ),
    );
    for (const [code, kind] of Object.entries(problems)) {
      const found = listed.filter((entry) => entry.problem.code === code);
      expect(found.length, `${code} is sent by no operation: add it to ANSWER_TABLE`).toBeGreaterThan(0);
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

  it("takes every catalogue entry as it comes, a new one included", () => {
    const sources = loadOpenApiSources();
    const grown = buildOpenApi({
      ...sources,
      problems: {
        ...sources.problems,
        GW_ERR_TEST_ONLY: { status: 418, slug: "test-only", title: "t", retryable: false },
      },
    });
    expect(grown.components.schemas.GW_ERR_TEST_ONLY?.properties).toMatchObject({
      type: { const: `${PROBLEM_TYPE_BASE}test-only` },
      status: { const: 418 },
    });
    expect(grown.components.parameters.ProblemSlug?.schema.enum).toContain("test-only");
  });

  it("documents only problems the catalogue has", () => {
    const known = problems;
    for (const { operation } of operations) {
      for (const response of Object.values(operation.responses)) {
        for (const problem of problemsOf(doc, response)) expect(Object.keys(known)).toContain(problem.code);
      }
    }
  });

  it("answers exactly with ANSWER_TABLE's statuses", () => {
    const known = problems;
    for (const { operation } of operations) {
      const answers = ANSWER_TABLE[operation.operationId as keyof typeof ANSWER_TABLE];
      const expected = new Set([
        ...answers.success.map(String),
        ...answers.problems.flatMap((code) => (known[code] === undefined ? [] : [String(known[code].status)])),
      ]);
      expect(new Set(Object.keys(operation.responses)), operation.operationId).toEqual(expected);
    }
  });

  it("lists every answer of POST /integration/v1/orders/paid", () => {
    const statuses = Object.keys(postOrderPaid?.responses ?? {}).map(Number);
    for (const status of [200, 201, 202, 400, 401, 409, 413, 415, 422, 429, 502, 503]) {
      expect(statuses).toContain(status);
    }
    const problemTypes = (status: string) => {
      const response = postOrderPaid?.responses[status];
      return response === undefined ? [] : problemsOf(doc, response).map((p) => p.type);
    };
    expect(problemTypes("429")).toEqual(["/integration/v1/problems/rate-limited"]);
    expect(problemTypes("401")).toEqual(["/integration/v1/problems/unauthorized"]);
    expect(problemTypes("503").sort()).toEqual([
      "/integration/v1/problems/shutting-down",
      "/integration/v1/problems/storage-unavailable",
    ]);
  });

  it("puts the headers on the answers that carry them", () => {
    const headers = (status: string) => Object.keys(postOrderPaid?.responses[status]?.headers ?? {});
    for (const status of ["200", "201", "202", "409"]) expect(headers(status), status).toContain("Location");
    for (const status of ["200", "201", "422", "502"]) expect(headers(status), status).toContain("Idempotent-Replayed");
    for (const status of ["202", "429", "503"]) expect(headers(status), status).toContain("Retry-After");
    expect(headers("401")).toContain("WWW-Authenticate");
    for (const { operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status === "429" || status === "503") expect(Object.keys(response.headers ?? {})).toContain("Retry-After");
      }
    }
  });

  it("works the retry through with answers the POST operation declares", () => {
    const example = postOrderPaid?.["x-retry-example"];
    const statuses = example?.steps.map((step) => step.response.status);
    expect(statuses).toEqual([202, 202, 200, 409]);
    const ajv = documentAjv();
    for (const step of example?.steps ?? []) {
      const response = postOrderPaid?.responses[String(step.response.status)];
      const media = Object.values(response?.content ?? {})[0];
      expect(media, step.title).toBeDefined();
      const validate = ajv.compile(media?.schema ?? {});
      expect(validate(step.response.body) ? [] : validate.errors, step.title).toEqual([]);
      for (const name of Object.keys(step.response.headers)) {
        expect(Object.keys(response?.headers ?? {}), `${step.title}: ${name}`).toContain(name);
      }
    }
    expect(example?.steps[2]?.response.headers["Idempotent-Replayed"]).toBe("true");
  });
});

describe("the order-paid schema in the document", () => {
  const requestSchema = postOrderPaid?.requestBody?.content[JSON_MEDIA_TYPE]?.schema ?? {};

  it("accepts schemas/examples/order-paid.json and refuses what the gateway refuses", () => {
    const ajv = documentAjv();
    const validate = ajv.compile(requestSchema);
    const example = readJson("schemas/examples/order-paid.json");
    expect(validate(example) ? [] : validate.errors).toEqual([]);
    const order = example.order as JsonObject;
    expect(validate({ ...example, order: { ...order, total: 1890 } })).toBe(false);
    expect(validate({ ...example, surprise: true })).toBe(false);
    expect(validate({ ...example, event_id: "has space" })).toBe(false);
  });

  it("is the validator's own schema, with $defs moved to components", () => {
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
      ...(back(resolvePointer(doc, String(requestSchema.$ref)) as JsonObject) as JsonObject),
      $defs: Object.fromEntries(
        defNames.map((name) => [name, back(doc.components.schemas[defComponentName(name)] ?? {})]),
      ),
    };
    expect(rebuilt).toEqual(orderPaidSchema);
  });
});

describe("the routes the gateway registers", () => {
  /** Every route of every route plugin, with the schemas Fastify validates it with. */
  async function registeredRoutes(): Promise<Map<string, { body?: JsonObject; querystring?: JsonObject }>> {
    const app = Fastify();
    const routes = new Map<string, { body?: JsonObject; querystring?: JsonObject }>();
    app.addHook("onRoute", (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const path = route.url.replace(/:([A-Za-z_]+)/g, "{$1}");
      for (const method of methods) {
        if (method !== "HEAD") routes.set(`${method.toLowerCase()} ${path}`, (route.schema ?? {}) as JsonObject);
      }
    });
    // Registration reads only these options; the handlers, which use the rest, never run here.
    const unused = {} as EventRegister;
    await app.register(healthRoutes, { register: unused });
    await app.register(problemTypeRoutes);
    await app.register(metricsRoutes, { metrics: {} as GatewayMetrics });
    await app.register(orderPaidRoutes, {
      senders: [],
      rateLimit: { max: 0, windowMs: 1000 },
    } as unknown as OrderPaidRoutesOptions);
    await app.register(adminRoutes, {
      register: unused,
      adminToken: "unused-token-0123456789",
      now: Date.now,
    });
    await app.register(docsRoutes);
    await app.ready();
    await app.close();
    return routes;
  }

  it("are exactly the operations of the document", async () => {
    const routes = await registeredRoutes();
    expect(new Set(routes.keys())).toEqual(new Set(operations.map(({ method, path }) => `${method} ${path}`)));
  });

  it("validate bodies and query strings with the schemas the document shows", async () => {
    const routes = await registeredRoutes();
    let compared = 0;
    for (const { method, path, operation } of operations) {
      const schema = routes.get(`${method} ${path}`);
      if (schema?.body !== undefined) {
        const documented = operation.requestBody?.content[JSON_MEDIA_TYPE]?.schema;
        expect(resolvePointer(doc, String(documented?.$ref)), `${method} ${path} body`).toEqual(schema.body);
        compared += 1;
      }
      const query = (operation.parameters ?? [])
        .map((p) => ("$ref" in p ? (resolvePointer(doc, (p as Ref).$ref) as ParameterObject) : p))
        .filter((p) => p.in === "query");
      const routeQuery = (schema?.querystring?.properties ?? {}) as Record<string, JsonObject>;
      expect(query.map((p) => p.name).sort(), `${method} ${path} query`).toEqual(Object.keys(routeQuery).sort());
      for (const parameter of query) {
        expect(parameter.schema, `${method} ${path} ?${parameter.name}`).toEqual(routeQuery[parameter.name]);
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThanOrEqual(9);
  });
});

describe("GET /openapi.json and GET /docs over HTTP", () => {
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    app = Fastify({ logger: false });
    await app.register(docsRoutes);
    await app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app.close();
  });

  it("serves the document as JSON", async () => {
    const answer = await call(`${base}/openapi.json`);
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(answer.json()).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  it("serves one self-contained page with every endpoint, answer, problem type, header and the retry", async () => {
    const answer = await call(`${base}/docs`);
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(answer.headers["content-security-policy"]).toBe(DOCS_CSP);
    const html = answer.text;
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|url\(|\bsrc=/i);
    expect(html).not.toMatch(/href="(https?:)?\/\//i);

    const text = html
      .replaceAll("&quot;", '"')
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">")
      .replaceAll("&amp;", "&");
    for (const { method, path } of operations)
      expect(text).toContain(`${method.toUpperCase()}</span> <code>${path}</code>`);
    for (const kind of Object.values(problems)) {
      expect(text).toContain(PROBLEM_TYPE_BASE + kind.slug);
      expect(text).toContain(kind.title);
    }
    for (const header of ["X-Correlation-ID", "Idempotent-Replayed", "Location", "Retry-After", "Idempotency-Key"]) {
      expect(text).toContain(`<code>${header}</code>`);
    }
    for (const status of Object.keys(postOrderPaid?.responses ?? {})) expect(text).toContain(`>${status}</td>`);
    expect(text).toContain("HTTP/1.1 202 Accepted");
    expect(text).toContain("Retry-After: 1");
    expect(text).toContain("HTTP/1.1 200 OK");
    expect(text).toContain("Idempotent-Replayed: true");
    expect(text).toContain("HTTP/1.1 409 Conflict");
  });
});
