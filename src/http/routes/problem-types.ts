import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { PROBLEM_TYPE_BASE, problems } from "../../errors/catalogue.ts";
import { problemAnswer } from "../answers.ts";
import { sendAnswer } from "../problem-handler.ts";
import { answers, EVERY_ROUTE, PATH_PARAMETER, success } from "../schemas/responses.ts";

const [firstCode, firstKind] = Object.entries(problems)[0] ?? [];

const problemTypeSchema = {
  operationId: "getProblemType",
  tags: ["problems"],
  security: [],
  summary: "Describe a problem type",
  description: "Each problem `type` URI resolves here (RFC 9457).",
  // Any string: an unknown slug is 404, not a 400 from the validator.
  params: Type.Object({
    slug: Type.String({
      description: `The last segment of a problem \`type\`: ${[...new Set(Object.values(problems).map((kind) => kind.slug))].map((slug) => `\`${slug}\``).join(", ")}.`,
    }),
  }),
  response: answers(
    {
      200: success("The problem type.", {
        schema: "ProblemTypeDescription",
        examples: firstKind === undefined ? {} : { [firstKind.slug]: { value: { code: firstCode, ...firstKind } } },
      }),
    },
    [...EVERY_ROUTE, ...PATH_PARAMETER, "GW_ERR_NOT_FOUND"],
  ),
};

/** Problem `type` URIs resolve to a description, as RFC 9457 recommends. */
export async function problemTypeRoutes(app: FastifyInstance): Promise<void> {
  const bySlug = new Map<string, unknown>(
    Object.entries(problems).map(([code, kind]) => [kind.slug, { code, ...kind }]),
  );
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get(`${PROBLEM_TYPE_BASE}:slug`, { schema: problemTypeSchema }, async (request, reply) => {
      const kind = bySlug.get(request.params.slug);
      if (kind === undefined) {
        return sendAnswer(reply, problemAnswer("GW_ERR_NOT_FOUND", request.id, { detail: "no such problem type" }));
      }
      return kind;
    });
}
