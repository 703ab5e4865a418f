import type { FastifyRequest } from "fastify";
import { ConsoleError } from "./console-error.ts";
import { consolePaths } from "./paths.ts";

/**
 * A wrong token on the sign-in form, counted by the gateway's auth throttle
 * like a wrong token on the APIs (per address and per token, shared by every
 * instance on PostgreSQL). Over the limit the console answers with its own
 * page: 429 with Retry-After. The right token is never counted nor refused.
 */
export async function countFailedSignIn(request: FastifyRequest, token: string): Promise<void> {
  const seconds = await request.server.authThrottle.failed(request, "console", token);
  if (seconds === undefined) return;
  throw new ConsoleError(
    429,
    "Too many sign-in attempts",
    `too many wrong tokens from your address or with this token; your own token signs in at any time, another attempt in ${seconds} s`,
    { retryAfterSeconds: seconds, link: { href: consolePaths.signIn, text: "Sign in" } },
  );
}
