import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendError } from "./http-io.ts";

export interface Credentials {
  user: string;
  password: string;
}

/** Digests first: timingSafeEqual needs equal lengths, and comparing lengths directly would leak them. */
export function basicAuthMatches(header: string | undefined, expected: Credentials): boolean {
  if (header === undefined) return false;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (match?.[1] === undefined) return false;
  const given = Buffer.from(match[1], "base64");
  const wanted = Buffer.from(`${expected.user}:${expected.password}`, "utf8");
  return timingSafeEqual(digest(given), digest(wanted));
}

function digest(bytes: Buffer): Buffer {
  return createHash("sha256").update(bytes).digest();
}

/** Answers 401 itself when the request may not pass, so callers just return on false. */
export function requireAuth(req: IncomingMessage, res: ServerResponse, expected: Credentials | undefined): boolean {
  if (expected === undefined || basicAuthMatches(req.headers.authorization, expected)) return true;
  sendError(res, 401, "UNAUTHORIZED", "Basic credentials are missing or wrong", {
    "www-authenticate": 'Basic realm="1C", charset="UTF-8"',
  });
  return false;
}
