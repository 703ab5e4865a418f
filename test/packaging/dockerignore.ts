import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * .dockerignore as Docker reads it: one pattern a line, `#` comments, `!` re-includes,
 * `*` and `?` within one path segment, `**` across segments; a pattern that matches a
 * folder matches everything under it; the last pattern that matches a path decides.
 */
export function dockerIgnore(contextDir: string): (path: string) => boolean {
  const file = join(contextDir, ".dockerignore");
  const rules = existsSync(file) ? parseRules(readFileSync(file, "utf8")) : [];
  return (path) => {
    const segments = path.split("/");
    let ignored = false;
    for (const rule of rules) {
      // The path itself or any of its folders.
      for (let depth = 1; depth <= segments.length; depth++) {
        if (rule.pattern.test(segments.slice(0, depth).join("/"))) {
          ignored = !rule.negated;
          break;
        }
      }
    }
    return ignored;
  };
}

interface Rule {
  readonly pattern: RegExp;
  readonly negated: boolean;
}

function parseRules(text: string): Rule[] {
  const rules: Rule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const negated = line.startsWith("!");
    if (negated) line = line.slice(1).trim();
    line = line.replace(/^\/+/, "").replace(/\/+$/, "");
    rules.push({ pattern: globRegExp(line), negated });
  }
  return rules;
}

function globRegExp(glob: string): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i] ?? "";
    if (char === "*" && glob[i + 1] === "*") {
      // "**/" matches any number of folders, "**" at the end anything.
      source += glob[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += glob[i + 2] === "/" ? 2 : 1;
    } else if (char === "*") {
      source += "[^/]*";
    } else if (char === "?") {
      source += "[^/]";
    } else {
      source += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    }
  }
  return new RegExp(`^${source}$`);
}
