import { readFileSync } from "node:fs";

/**
 * The variables that hold a secret. Each may instead be given as NAME_FILE,
 * the path of a file holding the value: Docker and compose secrets are
 * mounted as files (/run/secrets/…), systemd has LoadCredential=, and the
 * official PostgreSQL image reads POSTGRES_PASSWORD_FILE the same way. A file
 * keeps the secret out of `docker inspect`, /proc/<pid>/environ and the
 * environment every child process inherits.
 */
export const SECRET_VARIABLES = [
  "ADMIN_TOKEN",
  "SENDER_TOKENS",
  "DATABASE_URL",
  "ONEC_USER",
  "ONEC_PASSWORD",
  "METRICS_TOKEN",
  // The command line's: the person's own token for `gateway replay`.
  "GATEWAY_TOKEN",
] as const;

export class SecretFileError extends Error {
  override readonly name = "SecretFileError";
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The environment with each NAME_FILE read into NAME. Setting both is an
 * error (which one wins would be a guess); so is a file that cannot be read
 * or holds nothing. Messages name the variable and the path, never the value.
 */
export function withSecretFiles(env: Env, read: (path: string) => string = readText): Env {
  const resolved: Record<string, string | undefined> = { ...env };
  for (const name of SECRET_VARIABLES) {
    const fileVariable = `${name}_FILE`;
    const path = env[fileVariable]?.trim();
    if (path === undefined || path === "") continue;
    if (env[name] !== undefined && env[name] !== "") {
      throw new SecretFileError(`${name} and ${fileVariable} are both set; set one of them`);
    }
    resolved[name] = secretFileContent(fileVariable, path, read);
    // Read once: the result can go through withSecretFiles again (the command line, then loadConfig).
    resolved[fileVariable] = undefined;
  }
  return resolved;
}

/**
 * The file's text without its trailing newlines, as the shell's `$(< file)`
 * (and so the PostgreSQL image) reads it: `echo token > file` just works.
 * Anything else, leading or inner spaces included, is part of the secret.
 */
function secretFileContent(fileVariable: string, path: string, read: (path: string) => string): string {
  let text: string;
  try {
    text = read(path);
  } catch (error) {
    // The code only (ENOENT, EACCES, EISDIR): the path is ours to name, the rest of Node's message adds nothing.
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new SecretFileError(`${fileVariable}: cannot read ${path}: ${code}`);
  }
  const value = text.replace(/[\r\n]+$/, "");
  if (value === "") throw new SecretFileError(`${fileVariable}: ${path} is empty`);
  return value;
}

function readText(path: string): string {
  return readFileSync(path, "utf8");
}
