import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { JsonObject, JsonValue, RetryExample } from "../../src/http/openapi/types.ts";

/**
 * The parts of OpenAPI 3.1 the gateway's document uses, typed just enough to
 * check it: @fastify/swagger builds the document, and only the test reads it
 * this closely.
 */

/** A Reference Object; OpenAPI 3.1 lets `summary` and `description` override the target's. */
interface Ref {
  readonly $ref: string;
  readonly summary?: string;
  readonly description?: string;
}

type OrRef<T> = T | Ref;

interface InfoObject {
  readonly title: string;
  readonly version: string;
  readonly summary?: string;
  readonly description: string;
}

interface ExampleObject {
  readonly summary?: string;
  readonly description?: string;
  readonly value: JsonValue;
}

interface MediaTypeObject {
  readonly schema: JsonObject;
  readonly example?: JsonValue;
  readonly examples?: Readonly<Record<string, ExampleObject>>;
}

interface HeaderObject {
  readonly description: string;
  readonly required?: boolean;
  readonly schema: JsonObject;
  readonly example?: JsonValue;
}

interface LinkObject {
  readonly operationId: string;
  readonly parameters?: Readonly<Record<string, string>>;
  readonly description?: string;
}

export interface ResponseObject {
  readonly description: string;
  readonly headers?: Readonly<Record<string, OrRef<HeaderObject>>>;
  readonly content?: Readonly<Record<string, MediaTypeObject>>;
  readonly links?: Readonly<Record<string, LinkObject>>;
}

export interface ParameterObject {
  readonly name: string;
  readonly in: "path" | "query" | "header";
  readonly description?: string;
  readonly required: boolean;
  readonly schema: JsonObject;
  readonly example?: JsonValue;
}

interface RequestBodyObject {
  readonly description?: string;
  readonly required: boolean;
  readonly content: Readonly<Record<string, MediaTypeObject>>;
}

type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

export interface OperationObject {
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly security: readonly SecurityRequirement[];
  readonly parameters?: readonly OrRef<ParameterObject>[];
  readonly requestBody?: RequestBodyObject;
  readonly responses: Readonly<Record<string, ResponseObject>>;
  readonly "x-retry-example"?: RetryExample;
}

type HttpMethod = "get" | "post";

type PathItemObject = Readonly<Partial<Record<HttpMethod, OperationObject>>>;

interface SecuritySchemeObject {
  readonly type: "http";
  readonly scheme: "bearer";
  readonly description: string;
}

interface ComponentsObject {
  readonly schemas: Readonly<Record<string, JsonObject>>;
  readonly headers: Readonly<Record<string, HeaderObject>>;
  readonly securitySchemes: Readonly<Record<string, SecuritySchemeObject>>;
}

interface TagObject {
  readonly name: string;
  readonly description: string;
}

export interface OpenApiDocument {
  readonly openapi: string;
  readonly jsonSchemaDialect: string;
  readonly info: InfoObject;
  readonly servers: readonly { readonly url: string; readonly description: string }[];
  readonly tags: readonly TagObject[];
  readonly paths: Readonly<Record<string, PathItemObject>>;
  readonly components: ComponentsObject;
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
export function documentAjv(doc: OpenApiDocument): { compile: (schema: JsonValue) => ValidateFunction } {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormatsModule.default(ajv);
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    ajv.addSchema(rebased(schema) as JsonObject, COMPONENTS_BASE + name);
  }
  return { compile: (schema) => ajv.compile(rebased(schema) as JsonObject) };
}
