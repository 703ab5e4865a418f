/**
 * The JSON the gateway's examples are made of, and the worked retry example
 * the order route carries (extension `x-retry-example`). Schemas stay plain
 * JSON: they are JSON Schema 2020-12, which OpenAPI 3.1 takes as is.
 */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };
export type JsonObject = { readonly [key: string]: JsonValue };

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
