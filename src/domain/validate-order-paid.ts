import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { ProblemFieldError } from "../errors/problem.ts";
import { packageFile } from "../util/package-files.ts";
import { isDateTime } from "./date-time-format.ts";
import type { OrderPaidEvent } from "./order-paid.ts";

const schemaUrl = packageFile("schemas/order-paid.schema.json");
export const orderPaidSchema: Record<string, unknown> = JSON.parse(readFileSync(schemaUrl, "utf8"));

// ajv-formats is CommonJS; under ESM its function arrives as the namespace's `default`.
const addFormats = addFormatsModule.default;

/**
 * Strict on purpose: Fastify's own Ajv coerces "10" into 10 and drops unknown
 * properties in silence; for money and for idempotency both are wrong.
 */
const ajv = new Ajv2020({
  allErrors: true,
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: false,
  strict: true,
});
addFormats(ajv);
// The same answers as ajv-formats' date-time, without its garbage (date-time-format.ts).
ajv.addFormat("date-time", isDateTime);
const validate = ajv.compile<OrderPaidEvent>(orderPaidSchema);

export type SchemaCheck = { ok: true; event: OrderPaidEvent } | { ok: false; errors: ProblemFieldError[] };

export function checkOrderPaidSchema(value: unknown): SchemaCheck {
  if (validate(value)) return { ok: true, event: value };
  return { ok: false, errors: (validate.errors ?? []).map(toFieldError) };
}

function toFieldError(error: ErrorObject): ProblemFieldError {
  if (error.keyword === "additionalProperties") {
    const extra = String(error.params.additionalProperty);
    return { path: `${error.instancePath}/${extra}`, rule: "unknown-property", message: `unknown property "${extra}"` };
  }
  if (error.keyword === "required") {
    const missing = String(error.params.missingProperty);
    return { path: `${error.instancePath}/${missing}`, rule: "required", message: `"${missing}" is required` };
  }
  return { path: error.instancePath || "/", rule: error.keyword, message: error.message ?? error.keyword };
}
