/**
 * Headers that must come once. Node keeps the first Authorization or
 * Content-Type and drops the others in silence, and joins repeated unknown
 * headers with ", ": a request whose two copies disagree would be read by
 * whichever copy Node chose. It is refused instead, before anyone reads it.
 */
// X-Correlation-ID is not here: proxies may add a copy of their own, and an id
// Node joined from two copies fails correlationIdOf's pattern and is replaced.
const SINGLETONS: ReadonlyMap<string, string> = new Map(
  ["Authorization", "Content-Type", "Content-Encoding", "Idempotency-Key"].map((name) => [name.toLowerCase(), name]),
);

/** The shortest and longest of those names: most headers are skipped by length alone. */
const SHORTEST = Math.min(...[...SINGLETONS.keys()].map((name) => name.length));
const LONGEST = Math.max(...[...SINGLETONS.keys()].map((name) => name.length));

/**
 * The first singleton header that `rawHeaders` (Node's name, value, name,
 * value… list, as sent) carries more than once, by its usual spelling.
 */
export function repeatedSingletonHeader(rawHeaders: readonly string[]): string | undefined {
  let seen: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i] ?? "";
    if (raw.length < SHORTEST || raw.length > LONGEST) continue;
    const name = raw.toLowerCase();
    const spelling = SINGLETONS.get(name);
    if (spelling === undefined) continue;
    seen ??= new Set();
    if (seen.has(name)) return spelling;
    seen.add(name);
  }
  return undefined;
}
