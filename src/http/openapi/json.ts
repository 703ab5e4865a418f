import type { JsonObject, JsonValue } from "./types.ts";

/** Small building blocks of the document: media types, component references, plain-JSON checks. */

export const OPENAPI_VERSION = "3.1.0";
export const PROBLEM_MEDIA_TYPE = "application/problem+json";
export const JSON_MEDIA_TYPE = "application/json";
export const DOCS_PATH = "/docs";
export const OPENAPI_PATH = "/openapi.json";
export const PROMETHEUS_MEDIA_TYPE = "text/plain; version=0.0.4";

export const schemaRef = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });

/** `money` in the schema's `$defs` is `#/components/schemas/Money` in the document. */
export function defComponentName(defName: string): string {
  return defName.charAt(0).toUpperCase() + defName.slice(1);
}

export function parseJsonObject(text: string): JsonObject {
  return asJsonObject(JSON.parse(text), "example");
}

/** Checks that a value is plain JSON (what JSON.parse or a literal gives) and types it so. */
export function asJsonObject(value: unknown, what: string): JsonObject {
  if (!isJson(value) || typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`${what} is not a JSON object`);
  }
  return value as JsonObject;
}

function isJson(value: unknown): value is JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value === "object") return Object.values(value).every(isJson);
  return false;
}
