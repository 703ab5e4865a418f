import type { FastifyInstance } from "fastify";
import { PROBLEM_TYPE_BASE, problems } from "../../errors/catalogue.ts";
import { problemAnswer } from "../answers.ts";
import { sendAnswer } from "../problem-handler.ts";

/** Problem `type` URIs resolve to a description, as RFC 9457 recommends. */
export async function problemTypeRoutes(app: FastifyInstance): Promise<void> {
  const bySlug = new Map<string, unknown>(
    Object.entries(problems).map(([code, kind]) => [kind.slug, { code, ...kind }]),
  );
  app.get<{ Params: { slug: string } }>(`${PROBLEM_TYPE_BASE}:slug`, async (request, reply) => {
    const kind = bySlug.get(request.params.slug);
    if (kind === undefined) {
      return sendAnswer(reply, problemAnswer("GW_ERR_NOT_FOUND", request.id, { detail: "no such problem type" }));
    }
    return kind;
  });
}
