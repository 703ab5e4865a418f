import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { codeFile } from "../../../util/package-files.ts";

const ASSETS = {
  "console.css": "text/css; charset=utf-8",
  "console.js": "text/javascript; charset=utf-8",
} as const;

/**
 * The stylesheet and the script, read once at start from the code's tree
 * (src/, or dist/ where the build copies them unchanged): what is in the
 * repository is what is served. Public: the
 * sign-in page needs them too, and they hold nothing secret.
 */
export async function assetRoutes(app: FastifyInstance): Promise<void> {
  for (const [name, contentType] of Object.entries(ASSETS)) {
    const content = readFileSync(codeFile(`http/console/assets/${name}`));
    app.get(`/assets/${name}`, { schema: { hide: true } }, async (_request, reply) =>
      reply.header("cache-control", "no-cache").type(contentType).send(content),
    );
  }
}
