import { readFileSync } from "node:fs";
import { orderPaidSchema } from "../../domain/validate-order-paid.ts";
import { problems } from "../../errors/catalogue.ts";
import { ANSWER_TABLE, type OperationId } from "./answer-table.ts";
import { hoistDefs, problemSchema, viewSchemas } from "./component-schemas.ts";
import { exampleData } from "./examples.ts";
import { asJsonObject, OPENAPI_VERSION } from "./json.ts";
import { type OperationSpec, operationSpecs } from "./operations.ts";
import { HEADERS, parameters } from "./parameters.ts";
import { problemResponses, sortByStatus } from "./problem-responses.ts";
import type {
  HttpMethod,
  JsonObject,
  OpenApiDocument,
  OpenApiSources,
  OperationObject,
  PathItemObject,
  ResponseObject,
} from "./types.ts";

/** The sources as the running gateway has them: the very schema object its validator compiled. */
export function loadOpenApiSources(): OpenApiSources {
  const root = new URL("../../../", import.meta.url);
  const pkg = asJsonObject(JSON.parse(readFileSync(new URL("package.json", root), "utf8")), "package.json");
  const example = JSON.parse(readFileSync(new URL("schemas/examples/order-paid.json", root), "utf8"));
  return {
    version: typeof pkg.version === "string" ? pkg.version : "0.0.0",
    orderPaidSchema: asJsonObject(structuredClone(orderPaidSchema), "order-paid schema"),
    orderPaidExample: asJsonObject(example, "order-paid example"),
    problems,
  };
}

/**
 * The OpenAPI 3.1 document of the gateway's HTTP API. Pure: the same sources
 * give the same document. The answers come from ANSWER_TABLE, the problem
 * types from the catalogue, the request body from the validator's own schema.
 */
export function buildOpenApi(sources: OpenApiSources = loadOpenApiSources()): OpenApiDocument {
  const kinds = sources.problems;
  const orderPaid = hoistDefs(sources.orderPaidSchema);
  const examples = exampleData(sources.orderPaidExample, kinds);

  const schemas: Record<string, JsonObject> = {};
  const addSchema = (name: string, schema: JsonObject) => {
    if (name in schemas) throw new Error(`two component schemas named ${name}`);
    schemas[name] = schema;
  };
  addSchema("OrderPaidEvent", orderPaid.root);
  for (const [name, schema] of Object.entries(orderPaid.defs)) addSchema(name, schema);
  for (const [name, schema] of Object.entries(viewSchemas(kinds))) addSchema(name, schema);
  for (const [code, kind] of Object.entries(kinds)) addSchema(code, problemSchema(code, kind));

  const specs = operationSpecs(sources, examples, kinds);
  const paths: Record<string, Partial<Record<HttpMethod, OperationObject>>> = {};
  for (const [id, spec] of Object.entries(specs) as [OperationId, OperationSpec][]) {
    const answers = ANSWER_TABLE[id];
    const declared = Object.keys(spec.success).map(Number);
    const missing = answers.success.filter((status) => !declared.includes(status));
    const extra = declared.filter((status) => !answers.success.includes(status));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(
        `${id}: ANSWER_TABLE says ${answers.success.join(",")}, the spec describes ${declared.join(",")}`,
      );
    }
    const responses: Record<string, ResponseObject> = {};
    for (const status of answers.success) {
      const response = spec.success[status];
      if (response !== undefined) responses[String(status)] = response;
    }
    for (const [status, response] of Object.entries(problemResponses(answers.problems, kinds, examples.problems))) {
      if (status in responses) throw new Error(`${id}: ${status} is both a success and a problem`);
      responses[status] = response;
    }
    const operation: OperationObject = {
      operationId: id,
      summary: spec.summary,
      description: spec.description,
      tags: [spec.tag],
      security: spec.security === "none" ? [] : [{ [`${spec.security}Bearer`]: [] }],
      ...(spec.parameters === undefined ? {} : { parameters: spec.parameters }),
      ...(spec.requestBody === undefined ? {} : { requestBody: spec.requestBody }),
      responses: sortByStatus(responses),
      ...(spec.retryExample === undefined ? {} : { "x-retry-example": spec.retryExample }),
    };
    paths[spec.path] = { ...paths[spec.path], [spec.method]: operation };
  }

  return {
    openapi: OPENAPI_VERSION,
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "1C order gateway",
      version: sources.version,
      summary: "Exactly-once delivery of paid-order events from e-commerce sites to 1C:Enterprise",
      description: INFO_DESCRIPTION,
    },
    servers: [{ url: "/", description: "This gateway" }],
    tags: [
      { name: "orders", description: "Senders: post paid-order events and follow them." },
      { name: "problems", description: "Every problem `type` URI resolves here." },
      { name: "operations", description: "Probes and metrics for the platform." },
      { name: "admin", description: "Support staff; only when ADMIN_TOKEN is set (404 otherwise)." },
      { name: "docs", description: "This document and its page." },
    ],
    paths: paths as Record<string, PathItemObject>,
    components: {
      schemas,
      headers: HEADERS,
      parameters: parameters(orderPaid, kinds),
      securitySchemes: {
        senderBearer: {
          type: "http",
          scheme: "bearer",
          description:
            "Each sender's own token (SENDER_TOKENS or SENDERS_FILE): `Authorization: Bearer <sender token>`. A missing or unknown token is 401 `unauthorized` and records nothing. Events and their status URLs are scoped to the sender: another sender's event_id is 404. Only a gateway run without senders and with ALLOW_ANONYMOUS=true takes requests without a token (all of them as the sender `default`).",
        },
        adminBearer: {
          type: "http",
          scheme: "bearer",
          description:
            "`Authorization: Bearer <ADMIN_TOKEN>`. The admin routes exist only when ADMIN_TOKEN is set; without a token 401 `unauthorized`, with a wrong one 403 `forbidden`.",
        },
      },
    },
  };
}

const INFO_DESCRIPTION = `Exactly-once gateway for paid-order events from e-commerce sites to 1C:Enterprise. A sender posts an order-paid event; the gateway records it durably, delivers it to 1C, and answers every repeat of it with the same outcome.

**Idempotency rules**

- \`event_id\` is the idempotency key: make it once per business event (1-128 of \`A-Z a-z 0-9 . _ : -\`, not \`.\` or \`..\`) and send the same body under it on every retry. An \`Idempotency-Key\` header is optional and must equal \`event_id\`.
- Event ids are scoped per sender: two senders may use the same \`event_id\` without meeting.
- A repeat never makes a second order. A finished event answers every repeat with the first answer's bytes and \`Idempotent-Replayed: true\` (a success is then 200 instead of 201; a 422 or 502 stays as it was).
- Not finished yet (1C slow or down, or another request is delivering it): 202 with \`Location\` (the status URL) and \`Retry-After\`. The event is committed and will not be lost: resend the same body after \`Retry-After\` seconds, or poll the status URL.
- The same \`event_id\` with another body: 409 \`event-id-conflict\`. A new event needs a new \`event_id\`.
- Refused before anything was recorded (400, 401, 408, 413, 414, 415, 417, 429, 503, and 422 \`schema-violation\` / \`business-rules-violated\`): fix what the problem says and send again under the same \`event_id\`.
- Final refusals (422 \`onec-rejected\`, \`onec-conflict\`; 502 \`delivery-abandoned\`): do not resend; support replays the event once the cause is fixed.

**Errors** are RFC 9457 \`application/problem+json\` documents with \`type\`, \`title\`, \`status\`, \`detail\`, \`code\`, \`correlation_id\` and \`retryable\`; every \`type\` resolves at \`GET /integration/v1/problems/{slug}\`. An unknown route is 404 \`not-found\`. A 500 is a bug, never an answer to bad data.

**Correlation**: send \`X-Correlation-ID\` (1-128 of \`A-Z a-z 0-9 . _ : @ / + = -\`) or the gateway makes a UUID; it comes back on every answer, is written on every log line and is forwarded to 1C.`;
