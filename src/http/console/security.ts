import type { FastifyReply, FastifyRequest } from "fastify";
import { ConsoleError } from "./console-error.ts";
import type { FormFields } from "./form-body.ts";
import { consolePaths } from "./paths.ts";
import { tokensMatch } from "./sessions.ts";

/**
 * Scripts, styles and images from the console's own routes only; nothing
 * inline, no frames, forms post only here. Event bodies are hostile input:
 * even if escaping ever failed, an injected script would not run.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Besides nosniff and HSTS, which every answer of the gateway carries (security-headers.ts). */
const HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONSOLE_CSP,
  // Not no-referrer: under it browsers send `Origin: null` on same-origin POSTs, which the origin check refuses.
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** On every console answer, pages, assets and errors alike. Pages hold personal data: never cached. */
export async function addSecurityHeaders(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.headers(HEADERS);
  if (!reply.hasHeader("cache-control")) reply.header("cache-control", "no-store");
}

/**
 * A POST whose Origin header names another site is refused before its body
 * is read. Browsers send Origin on every form POST; a client that sends none
 * (curl) still needs the session cookie and the form's token.
 */
export function checkOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  const own = `${request.protocol}://${request.host}`;
  if (origin !== own) {
    throw new ConsoleError(
      403,
      "Refused",
      `this form was sent from ${origin}, not from the console at ${own}. Behind a TLS proxy, set TRUST_PROXY and have the proxy pass Host and X-Forwarded-Proto`,
    );
  }
}

/** The synchronizer token: every form of a signed-in page posts back its session's token. */
export function checkCsrf(expected: string, form: FormFields): void {
  if (!tokensMatch(expected, form.get("csrf"))) {
    throw new ConsoleError(
      403,
      "Form expired",
      "this form does not carry your session's security token (it is from another session, or forged). Nothing was changed: reload the page and try again",
    );
  }
}

/** The sign-in form's double-submit check: its token must equal the sign-in cookie's. */
export function checkSignInToken(cookieToken: string | undefined, form: FormFields): void {
  if (cookieToken === undefined || !tokensMatch(cookieToken, form.get("csrf"))) {
    throw new ConsoleError(
      403,
      "Sign-in form expired",
      "the sign-in form expired or was not sent from this console; open it again",
      {
        link: { href: consolePaths.signIn, text: "Sign in" },
      },
    );
  }
}
