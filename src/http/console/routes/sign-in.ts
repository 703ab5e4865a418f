import type { FastifyInstance } from "fastify";
import { overTls } from "../../security-headers.ts";
import { clearCookie, cookieOf, setCookie } from "../cookies.ts";
import { formOf } from "../form-body.ts";
import { singleValues } from "../list-query.ts";
import { safeNextPath } from "../paths.ts";
import { sendPage } from "../requests.ts";
import { checkSignInToken } from "../security.ts";
import { type ConsoleSessions, isToken, randomToken, SESSION_COOKIE, SIGN_IN_COOKIE } from "../sessions.ts";
import { countFailedSignIn } from "../sign-in-throttle.ts";
import { signInPage } from "../views/sign-in-page.ts";

export interface SignInRoutesOptions {
  sessions: ConsoleSessions;
}

/** The console's only public pages: the sign-in form and its POST. */
export async function signInRoutes(app: FastifyInstance, options: SignInRoutesOptions): Promise<void> {
  const { sessions } = options;

  app.get("/sign-in", { schema: { hide: true } }, async (request, reply) => {
    const secure = overTls(request);
    // One token per browser, so a second tab's form stays valid; but only a token this
    // console could have made is sent back, never whatever a cookie happened to hold.
    const sent = cookieOf(request, SIGN_IN_COOKIE, secure);
    const token = isToken(sent) ? sent : randomToken();
    const next = safeNextPath(singleValues(request.query).next);
    setCookie(reply, SIGN_IN_COOKIE, token, secure);
    return sendPage(reply, 200, signInPage({ csrfToken: token, next }));
  });

  app.post("/sign-in", { schema: { hide: true } }, async (request, reply) => {
    const secure = overTls(request);
    const form = formOf(request);
    const formToken = cookieOf(request, SIGN_IN_COOKIE, secure);
    checkSignInToken(formToken, form);
    const next = safeNextPath(form.get("next"));
    const token = form.get("token") ?? "";
    const created = await sessions.signIn(token);
    if (created === undefined) {
      await countFailedSignIn(request, token);
      const error =
        "That token is not valid. Use your own token from OPERATORS_FILE (a sender's token does not sign in).";
      return sendPage(
        reply,
        401,
        signInPage({ csrfToken: isToken(formToken) ? formToken : randomToken(), next, error }),
      );
    }
    // A session this browser still had is ended, not left behind in the register.
    const previous = await sessions.resolve(cookieOf(request, SESSION_COOKIE, secure));
    if (previous !== undefined) await sessions.signOut(previous.session);
    request.log.info({ operator: created.user.principal.name }, "console sign-in");
    setCookie(reply, SESSION_COOKIE, created.id, secure);
    clearCookie(reply, SIGN_IN_COOKIE, secure);
    return reply.redirect(next, 303);
  });
}
