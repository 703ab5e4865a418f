/**
 * The per-request budget (README, "How fast it is"): a gateway profile's
 * samples grouped by the accept path's stages. Each sample goes to the
 * innermost stage on its stack, so canonical JSON inside admission counts as
 * canonical JSON; what no stage claims is Fastify, node's HTTP and the socket.
 * Names are the functions' own (they survive the bundle in dist/main.js);
 * only the gateway's own frames are offered (cpu-profile.ts).
 */
export const STAGES: ReadonlyArray<readonly [stage: string, functions: RegExp]> = [
  ["parse (UTF-8, strict JSON)", /^(readJsonBody|parseStrictJson)$/],
  ["validation (schema, business rules)", /^(checkOrderPaidSchema|checkBusinessRules)$/],
  ["canonical JSON + SHA-256", /^(canonicalizeEvent|fingerprintOf)$/],
  ["SHA-256 of the body's bytes", /^bodyDigest$/],
  ["admission, the rest", /^(admitOrderPaid|admit|#read)$/],
  [
    "register (main thread: read, crossing to the writer)",
    /^(accept|find|reserve|flushQueued|#flush|fromCloneable|toRecord|commit)$/,
  ],
  ["answer (reply, socket write)", /^(sendAnswer|answerFor)$/],
  ["log line", /^(requestCompleted|createChildLogger)$/],
  ["metrics", /^(countAnswer|countedAtScrape)$/],
  ["sender authentication", /^(senderOf|bearerToken)$/],
];

export const REST = "Fastify, HTTP, sockets (the rest)";

/** The stage of a sample whose stack is `names`, innermost first; V8's own entries stand for themselves. */
export function stageOf(names: Iterable<string>): string {
  for (const name of names) {
    if (name === "(garbage collector)" || name === "(program)") return name;
    for (const [stage, functions] of STAGES) if (functions.test(name)) return stage;
  }
  return REST;
}
