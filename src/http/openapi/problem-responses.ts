import { STATUS_CODES } from "node:http";
import type { ProblemKind } from "../../errors/catalogue.ts";
import { type DocumentedCode, PROBLEM_HEADERS, type ProblemHeader } from "./answer-table.ts";
import { problemExample } from "./examples.ts";
import { headerRef, PROBLEM_MEDIA_TYPE, schemaRef } from "./json.ts";
import { HEADERS } from "./parameters.ts";
import type { ExampleObject, HeaderObject, JsonObject, OrRef, ResponseObject } from "./types.ts";

/** The problem answers of an operation: one response per status, every problem type it can carry. */

export function problemResponses(
  codes: readonly DocumentedCode[],
  kinds: Record<string, ProblemKind>,
  examples: Record<string, JsonObject>,
): Record<string, ResponseObject> {
  const byStatus = new Map<number, string[]>();
  for (const code of new Set(codes)) {
    const kind = kinds[code];
    // A planned code that the catalogue dropped: nothing sends it any more.
    if (kind === undefined) continue;
    byStatus.set(kind.status, [...(byStatus.get(kind.status) ?? []), code]);
  }
  const responses: Record<string, ResponseObject> = {};
  for (const [status, group] of byStatus) {
    const slugs = (list: readonly string[]) => list.map((code) => `\`${kinds[code]?.slug}\``).join(", ");
    const headers: Record<string, OrRef<HeaderObject>> = { "X-Correlation-ID": headerRef("X-Correlation-ID") };
    const headerNames = new Set(group.flatMap((code) => PROBLEM_HEADERS[code as DocumentedCode] ?? []));
    for (const name of headerNames) {
      const carriers = group.filter((code) => PROBLEM_HEADERS[code as DocumentedCode]?.includes(name as ProblemHeader));
      headers[name] = headerRef(
        name,
        carriers.length === group.length
          ? HEADERS[name]?.description
          : `${HEADERS[name]?.description} Sent with ${slugs(carriers)}.`,
      );
    }
    const exampleMap: Record<string, ExampleObject> = {};
    for (const code of group) {
      const kind = kinds[code];
      const value = examples[code] ?? problemExample(code, kinds, kind?.title ?? code);
      exampleMap[code] = { summary: `${kind?.slug}: ${kind?.title}`, value };
    }
    const refs = group.map(schemaRef);
    responses[String(status)] = {
      description: `${STATUS_CODES[status] ?? "Error"}: ${group.map((code) => kinds[code]?.title).join("; ")}.`,
      headers,
      content: {
        [PROBLEM_MEDIA_TYPE]: {
          schema: refs.length === 1 && refs[0] !== undefined ? refs[0] : { oneOf: refs },
          examples: exampleMap,
        },
      },
    };
  }
  return responses;
}

export function sortByStatus(responses: Record<string, ResponseObject>): Record<string, ResponseObject> {
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}
