/**
 * The parts of OpenAPI 3.1 the gateway's document uses, typed just enough to
 * build it and to check it (test/http/openapi.test.ts). Schemas stay plain JSON: they are
 * JSON Schema 2020-12, which OpenAPI 3.1 takes as is.
 */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };
export type JsonObject = { readonly [key: string]: JsonValue };

/** A Reference Object; OpenAPI 3.1 lets `summary` and `description` override the target's. */
export interface Ref {
  readonly $ref: string;
  readonly summary?: string;
  readonly description?: string;
}

export type OrRef<T> = T | Ref;

export interface InfoObject {
  readonly title: string;
  readonly version: string;
  readonly summary?: string;
  readonly description: string;
}

export interface ExampleObject {
  readonly summary?: string;
  readonly description?: string;
  readonly value: JsonValue;
}

export interface MediaTypeObject {
  readonly schema: JsonObject;
  readonly example?: JsonValue;
  readonly examples?: Readonly<Record<string, ExampleObject>>;
}

export interface HeaderObject {
  readonly description: string;
  readonly required?: boolean;
  readonly schema: JsonObject;
  readonly example?: JsonValue;
}

export interface LinkObject {
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

export interface RequestBodyObject {
  readonly description?: string;
  readonly required: boolean;
  readonly content: Readonly<Record<string, MediaTypeObject>>;
}

export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

/** One HTTP exchange of the worked retry example (extension `x-retry-example`). */
export interface RetryStep {
  readonly title: string;
  readonly explanation: string;
  readonly request: {
    readonly method: string;
    readonly path: string;
    readonly headers: Readonly<Record<string, string>>;
    readonly body?: JsonValue;
  };
  readonly response: {
    readonly status: number;
    readonly headers: Readonly<Record<string, string>>;
    readonly body: JsonValue;
  };
}

export interface RetryExample {
  readonly summary: string;
  readonly steps: readonly RetryStep[];
}

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

export type HttpMethod = "get" | "post";

export type PathItemObject = Readonly<Partial<Record<HttpMethod, OperationObject>>>;

export interface SecuritySchemeObject {
  readonly type: "http";
  readonly scheme: "bearer";
  readonly description: string;
}

export interface ComponentsObject {
  readonly schemas: Readonly<Record<string, JsonObject>>;
  readonly headers: Readonly<Record<string, HeaderObject>>;
  readonly securitySchemes: Readonly<Record<string, SecuritySchemeObject>>;
}

export interface TagObject {
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
