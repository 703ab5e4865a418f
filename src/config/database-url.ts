import { InvalidValue } from "./values.ts";

/** Where the register lives, as DATABASE_URL names it. */
export type RegisterLocation = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };

/**
 * `postgres://…` or `postgresql://…` is a PostgreSQL server; anything else is
 * a SQLite file, given as a path or a `sqlite:` / `file:` URL. Pure.
 */
export function registerLocation(databaseUrl: string): RegisterLocation {
  if (/^postgres(ql)?:/i.test(databaseUrl)) return { kind: "postgres", url: databaseUrl };
  const path = databaseUrl.replace(/^sqlite:(\/\/)?/i, "").replace(/^file:(\/\/)?/i, "");
  if (path === "") throw new InvalidValue(`DATABASE_URL must name a SQLite file, got "${databaseUrl}"`);
  return { kind: "sqlite", path };
}

/** For logs and messages: the file, or the server without its password. */
export function describeLocation(location: RegisterLocation): string {
  if (location.kind === "sqlite") return location.path;
  try {
    const url = new URL(location.url);
    url.password = "";
    return url.toString();
  } catch {
    return "a PostgreSQL server";
  }
}
