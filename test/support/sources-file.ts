import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** A SOURCES_FILE in `dir` (`{"sources": [...]}`, as the README shows it); returns its path. */
export function writeSourcesFile(dir: string, sources: readonly Record<string, unknown>[]): string {
  const path = join(dir, "sources.json");
  writeFileSync(path, JSON.stringify({ sources }));
  return path;
}
