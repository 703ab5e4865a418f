import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface TestOperator {
  name: string;
  role: string;
  token: string;
}

/** The three people of the issue, each with a token of their own. */
export const VIEWER: TestOperator = { name: "vera", role: "viewer", token: "viewer-token-of-vera-0123456789" };
export const OPERATOR: TestOperator = { name: "oleg", role: "operator", token: "operator-token-of-oleg-0123456789" };
export const ADMIN: TestOperator = { name: "alla", role: "admin", token: "admin-token-of-alla-0123456789" };

/** What the README tells people to put in the file: the hex SHA-256 of the token's UTF-8 bytes. */
export function tokenDigest(token: string): string {
  return createHash("sha256").update(Buffer.from(token, "utf8")).digest("hex");
}

/** An OPERATORS_FILE in `dir` listing `operators` by digest; returns its path. */
export function writeOperatorsFile(dir: string, operators: readonly TestOperator[], name = "operators.json"): string {
  const path = join(dir, name);
  const entries = operators.map(({ name, role, token }) => ({ name, role, token_sha256: tokenDigest(token) }));
  writeFileSync(path, JSON.stringify({ operators: entries }, null, 2));
  return path;
}
