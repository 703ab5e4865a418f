import { readFileSync } from "node:fs";
import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import { packageFile } from "../../util/package-files.ts";
import { componentSchemas } from "../schemas/components.ts";
import { HEADERS } from "../schemas/responses.ts";
import { OPENAPI_VERSION } from "./json.ts";

/**
 * What @fastify/swagger is given besides the routes: the document's info,
 * tags, authentication schemes and component schemas. Paths, parameters,
 * request bodies and answers all come from the routes' own schemas.
 */
export function openApiOptions(): FastifyDynamicSwaggerOptions {
  const pkg = JSON.parse(readFileSync(packageFile("package.json"), "utf8")) as {
    version?: unknown;
  };
  return {
    openapi: {
      openapi: OPENAPI_VERSION,
      info: {
        title: "1C order gateway",
        version: typeof pkg.version === "string" ? pkg.version : "0.0.0",
        summary: "Exactly-once delivery of paid-order events from e-commerce sites to 1C:Enterprise",
        description: INFO_DESCRIPTION,
      },
      servers: [{ url: "/", description: "This gateway" }],
      tags: [
        { name: "orders", description: "Senders: post paid-order events and follow them." },
        {
          name: "webhooks",
          description:
            "Platforms' native order webhooks (Shopify, WooCommerce, Tilda), one URL per platform and sender (SOURCES_FILE), verified by the platform's signature or the URL's secret.",
        },
        { name: "problems", description: "Every problem `type` URI resolves here." },
        { name: "operations", description: "Probes and metrics for the platform." },
        {
          name: "admin",
          description:
            "Support staff and 1C administrators; only when ADMIN_TOKEN or OPERATORS_FILE is set (404 otherwise).",
        },
        { name: "docs", description: "This document and its page." },
      ],
      components: {
        schemas: componentSchemas(),
        // The glossary /docs shows; each answer carries its own copy of the headers it sends.
        headers: Object.fromEntries(
          Object.entries(HEADERS).map(([name, { description, ...schema }]) => [
            name,
            // Every header is text.
            { description, schema: { ...schema, type: "string" as const } },
          ]),
        ),
        securitySchemes: {
          senderBearer: {
            type: "http",
            scheme: "bearer",
            description:
              "Each sender's own token (SENDER_TOKENS or SENDERS_FILE): `Authorization: Bearer <sender token>`. A missing or unknown token is 401 `unauthorized` and records nothing. Events and their status URLs are scoped to the sender: another sender's event_id is 404. Only a gateway run without senders and with ALLOW_ANONYMOUS=true takes requests without a token (all of them as the sender `default`).",
          },
          shopifyHmac: {
            type: "apiKey",
            in: "header",
            name: "X-Shopify-Hmac-Sha256",
            description:
              "Shopify's signature: base64 of HMAC-SHA256 over the raw body, keyed with the sender's secret (SOURCES_FILE). A missing or wrong one is 401 `webhook-signature` and records nothing.",
          },
          woocommerceSignature: {
            type: "apiKey",
            in: "header",
            name: "X-WC-Webhook-Signature",
            description:
              "WooCommerce's signature: base64 of HMAC-SHA256 over the raw body, keyed with the webhook's secret (SOURCES_FILE). A missing or wrong one is 401 `webhook-signature` and records nothing; only the unsigned creation ping `webhook_id=N` is answered without one.",
          },
          adminBearer: {
            type: "http",
            scheme: "bearer",
            description:
              "`Authorization: Bearer <token>`: a person's token from OPERATORS_FILE (role viewer, operator or admin), or ADMIN_TOKEN (the admin named `admin`). No token: 401 `unauthorized`; a token that is nobody's (a sender's included): 403 `forbidden`; a role without the right: 403 `forbidden`.",
          },
        },
      },
    },
    // OpenAPI 3.1 has `const`; rewriting it as `enum` would make the document's schemas differ from the validator's.
    convertConstToEnum: false,
    // @fastify/swagger has no option for it: the component schemas are JSON Schema 2020-12, said once here.
    transformObject: (document) =>
      "openapiObject" in document
        ? { ...document.openapiObject, jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema" }
        : document.swaggerObject,
  };
}

const INFO_DESCRIPTION = `Exactly-once gateway for paid-order events from e-commerce sites to 1C:Enterprise. A sender posts an order-paid event; the gateway records it durably, delivers it to 1C, and answers every repeat of it with the same outcome.

**Idempotency rules**

- \`event_id\` is the idempotency key: make it once per business event (1-128 of \`A-Z a-z 0-9 . _ : -\`, not \`.\` or \`..\`) and send the same body under it on every retry. An \`Idempotency-Key\` header is optional and must equal \`event_id\`.
- Event ids are scoped per sender: two senders may use the same \`event_id\` without meeting.
- A repeat never makes a second order. A finished event answers every repeat with the first answer's bytes and \`Idempotent-Replayed: true\` (a success is then 200 instead of 201; a 422 or 502 stays as it was).
- Not finished yet (1C slow or down, or another request is delivering it): 202 with \`Location\` (the status URL) and \`Retry-After\`. The event is committed and will not be lost: resend the same body after \`Retry-After\` seconds, or poll the status URL.
- The same \`event_id\` with another body: 409 \`event-id-conflict\`. A new event needs a new \`event_id\`.
- Refused before anything was recorded (400, 401, 408, 413, 415, 417, 429, 503, and 422 \`schema-violation\` / \`business-rules-violated\`): fix what the problem says and send again under the same \`event_id\`.
- Final refusals (422 \`onec-rejected\`, \`onec-conflict\`; 502 \`delivery-abandoned\`): do not resend; support replays the event once the cause is fixed.

**Errors** are RFC 9457 \`application/problem+json\` documents with \`type\`, \`title\`, \`status\`, \`detail\`, \`code\`, \`correlation_id\` and \`retryable\`; every \`type\` resolves at \`GET /integration/v1/problems/{slug}\`. An unknown route is 404 \`not-found\`. A 500 is a bug, never an answer to bad data.

**Correlation**: send \`X-Correlation-ID\` (1-128 of \`A-Z a-z 0-9 . _ : @ / + = -\`) or the gateway makes a UUID; it comes back on every answer, is written on every log line and is forwarded to 1C.`;
