import type { FastifyInstance } from "fastify";
import { parseStrictJson } from "../domain/strict-json.ts";
import { GatewayProblem } from "../errors/problem.ts";

/**
 * Replaces Fastify's JSON parser: same limits and media types, plus refusal of
 * repeated keys, which JSON.parse would silently collapse.
 */
export function registerStrictJsonParser(app: FastifyInstance, bodyLimit: number): void {
  app.removeContentTypeParser(["application/json"]);
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json$/,
    { parseAs: "string", bodyLimit },
    (_request, text, done) => {
      const body = typeof text === "string" ? text : text.toString("utf8");
      if (body.trim() === "") {
        done(new GatewayProblem("GW_ERR_INVALID_JSON", "the body is empty; send the event as a JSON object"));
        return;
      }
      const parsed = parseStrictJson(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body);
      if (parsed.ok) done(null, parsed.value);
      else if (parsed.reason === "duplicate-key") done(new GatewayProblem("GW_ERR_DUPLICATE_JSON_KEY", parsed.message));
      else done(new GatewayProblem("GW_ERR_INVALID_JSON", parsed.message));
    },
  );
}
