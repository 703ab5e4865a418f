import type { FastifyInstance } from "fastify";
import { buildOpenApi } from "../openapi/build-openapi.ts";
import { DOCS_PATH, OPENAPI_PATH } from "../openapi/json.ts";
import { renderDocsHtml } from "../openapi/render-docs.ts";

/** The page has no script and no external asset; the policy keeps it that way. */
export const DOCS_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/**
 * GET /openapi.json and GET /docs. Both are made once, here, from one
 * document object, so the page cannot say anything the document does not.
 * No authentication: the document holds no secret.
 */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  const document = buildOpenApi();
  const json = JSON.stringify(document);
  const html = renderDocsHtml(document);

  app.get(OPENAPI_PATH, async (_request, reply) =>
    reply.header("cache-control", "no-cache").type("application/json; charset=utf-8").send(json),
  );
  app.get(DOCS_PATH, async (_request, reply) =>
    reply
      .header("cache-control", "no-cache")
      .header("content-security-policy", DOCS_CSP)
      .header("x-content-type-options", "nosniff")
      .type("text/html; charset=utf-8")
      .send(html),
  );
}
