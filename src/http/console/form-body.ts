import formBody from "@fastify/formbody";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { parseMediaType } from "../media-type.ts";
import { ConsoleError } from "./console-error.ts";

/** The console's forms are a few short fields; the bulk preview's list of events is the longest. */
export const FORM_BODY_LIMIT = 64 * 1024;

const FORM_MEDIA_TYPE = "application/x-www-form-urlencoded";

/** A posted form: each field once. */
export type FormFields = ReadonlyMap<string, string>;

/**
 * Makes the console's encapsulated context read HTML forms and nothing else:
 * the gateway's JSON parser is removed here (only here: the rest of the
 * gateway keeps it), forms are parsed by @fastify/formbody within the
 * console's own limit, and any other body is 415 before it is read. What
 * the plugin leaves open is ours: a charset other than UTF-8 is 415, and a
 * field sent twice is 400.
 */
export async function acceptFormBodies(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  await app.register(formBody, { bodyLimit: FORM_BODY_LIMIT });
  app.addContentTypeParser("*", (_request, _payload, done) => {
    done(new ConsoleError(415, "Unsupported form", `the console reads forms sent as ${FORM_MEDIA_TYPE} only`));
  });
  app.addHook("onRequest", async (request) => checkCharset(request.headers["content-type"]));
  app.addHook("preValidation", async (request) => {
    if (request.body !== undefined) request.body = formFieldsOf(request.body);
  });
}

/**
 * The parsed form (`{name: value}`, a repeated name as an array) as fields.
 * A field sent twice is refused: which copy a reader takes differs from one
 * library to the next, and a second `reason` or `csrf` must never be
 * silently picked over the first.
 */
export function formFieldsOf(parsed: unknown): FormFields {
  const fields = new Map<string, string>();
  for (const [name, value] of Object.entries(parsed ?? {})) {
    if (typeof value !== "string") throw new ConsoleError(400, "Bad form", `the field "${name}" was sent twice`);
    fields.set(name, value);
  }
  return fields;
}

/** The fields a route received; a POST without a body has none (and so fails the CSRF check). */
export function formOf(request: FastifyRequest): FormFields {
  return request.body instanceof Map ? request.body : new Map();
}

function checkCharset(contentType: string | undefined): void {
  const mediaType = parseMediaType(contentType ?? "");
  if (mediaType === undefined || `${mediaType.type}/${mediaType.subtype}` !== FORM_MEDIA_TYPE) return;
  const charset = mediaType.parameters.find(([name]) => name === "charset")?.[1];
  if (charset !== undefined && !["utf-8", "utf8"].includes(charset.toLowerCase())) {
    throw new ConsoleError(415, "Unsupported form", `charset "${charset}" is not read; send the form in UTF-8`);
  }
}
