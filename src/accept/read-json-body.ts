import { type DecimalNumber, parseStrictJson } from "../domain/strict-json.ts";
import type { ProblemCode } from "../errors/catalogue.ts";

export type JsonBodyRead =
  | { ok: true; value: unknown; decimalNumbers: readonly DecimalNumber[] }
  | { ok: false; code: Extract<ProblemCode, "GW_ERR_INVALID_JSON" | "GW_ERR_DUPLICATE_JSON_KEY">; detail: string };

/** Fatal: a byte that is not UTF-8 is an error, not a U+FFFD that would then be recorded. Strips a leading BOM. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A JSON body's bytes as the gateway reads them on every route: UTF-8 only
 * (RFC 8259 §8.1), not empty, no key written twice, and the numbers written
 * with a fraction or an exponent listed (parseStrictJson). The one place
 * that says why a body could not be read.
 */
export function readJsonBody(raw: Uint8Array): JsonBodyRead {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return {
      ok: false,
      code: "GW_ERR_INVALID_JSON",
      detail: "the body is not valid UTF-8; JSON text must be UTF-8 (RFC 8259 §8.1). Nothing was recorded",
    };
  }
  if (text.trim() === "") {
    return { ok: false, code: "GW_ERR_INVALID_JSON", detail: "the body is empty; send the event as a JSON object" };
  }
  const parsed = parseStrictJson(text);
  if (parsed.ok) return parsed;
  return {
    ok: false,
    code: parsed.reason === "duplicate-key" ? "GW_ERR_DUPLICATE_JSON_KEY" : "GW_ERR_INVALID_JSON",
    detail: parsed.message,
  };
}
