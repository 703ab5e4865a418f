import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { readJsonBody } from "../accept/read-json-body.ts";
import type { DecimalNumber } from "../domain/strict-json.ts";
import { GatewayProblem } from "../errors/problem.ts";
import { ACCEPTED_CONTENT_CODING, checkJsonBodyHeaders } from "./media-type.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Numbers the JSON body wrote with a fraction or an exponent; set by the body parser. */
    jsonDecimalNumbers: readonly DecimalNumber[] | undefined;
  }
}

/**
 * Bodies worth reading: anything that may be application/json or
 * application/*+json (Fastify tests this against its normalised
 * `type/subtype; name="value"`). checkJsonBodyHeaders decides; this only
 * spares reading bodies that can never pass.
 */
export const MAYBE_JSON = /^application\/[^;]*json/;

/**
 * Replaces Fastify's parsers (JSON and text/plain) with ours: the same body
 * limit, plus refusal of content codings, charsets other than UTF-8, bytes
 * that are not UTF-8, repeated keys (which JSON.parse would silently
 * collapse), and every other media type.
 */
async function strictJsonParser(app: FastifyInstance, { bodyLimit }: { bodyLimit: number }): Promise<void> {
  app.decorateRequest("jsonDecimalNumbers", undefined);
  // Fastify's text/plain parser would hand a string to routes expecting an object.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(MAYBE_JSON, { parseAs: "buffer", bodyLimit }, (request, raw, done) => {
    const refusal = headersProblem(request);
    if (refusal !== undefined) {
      done(refusal);
      return;
    }
    const read = readJsonBody(raw as Buffer);
    if (read.ok) {
      request.jsonDecimalNumbers = read.decimalNumbers;
      done(null, read.value);
    } else done(new GatewayProblem(read.code, read.detail));
  });
  // Every other media type, or none: refused before its body is read.
  app.addContentTypeParser("*", (request, _payload, done) => {
    done(unsupportedBodyProblem(request));
  });
}

/** Wrapped with fastify-plugin: the parsers and the decorator belong to the root, for every route. */
export const strictJsonBody = fp(strictJsonParser, { name: "strict-json-body", fastify: "5.x" });

/**
 * The 415 for a body the gateway will not read, saying why. Also used for
 * Fastify's own refusal of a Content-Type it cannot parse at all.
 */
export function unsupportedBodyProblem(request: FastifyRequest): GatewayProblem {
  return (
    headersProblem(request) ??
    new GatewayProblem(
      "GW_ERR_UNSUPPORTED_MEDIA_TYPE",
      "send the event as a JSON body with Content-Type: application/json",
    )
  );
}

/** Why the request's Content-Type or Content-Encoding keeps its body from being read, if they do. */
export function headersProblem(request: FastifyRequest): GatewayProblem | undefined {
  const verdict = checkJsonBodyHeaders(request.headers["content-type"], request.headers["content-encoding"]);
  if (verdict.ok) return undefined;
  // RFC 9110 §15.5.16: a 415 for a content coding says which codings are read.
  const extras = verdict.reason === "content-coding" ? { acceptEncoding: ACCEPTED_CONTENT_CODING } : {};
  return new GatewayProblem("GW_ERR_UNSUPPORTED_MEDIA_TYPE", verdict.detail, extras);
}
