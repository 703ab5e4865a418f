import fastifyCookie from "@fastify/cookie";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { OperatorEntry } from "../../config/operators.ts";
import { problems } from "../../errors/catalogue.ts";
import type { PlatformWebhooks } from "../../operations/remap-delivery.ts";
import type { EventRegister } from "../../register/port.ts";
import { problemCodeFor } from "../problem-handler.ts";
import { overTls } from "../security-headers.ts";
import { ConsoleError } from "./console-error.ts";
import { clearCookie, cookieOf } from "./cookies.ts";
import { acceptFormBodies, FORM_BODY_LIMIT, formOf } from "./form-body.ts";
import { consolePaths, withQuery } from "./paths.ts";
import { sendPage, signedInOf } from "./requests.ts";
import { assetRoutes } from "./routes/assets.ts";
import { deliveryRoutes } from "./routes/deliveries.ts";
import { eventRoutes } from "./routes/events.ts";
import { replayRoutes } from "./routes/replay.ts";
import { signInRoutes } from "./routes/sign-in.ts";
import { addSecurityHeaders, checkCsrf, checkOrigin } from "./security.ts";
import { ConsoleSessions, DEFAULT_SESSION_LIFETIME, SESSION_COOKIE, type SessionLifetime } from "./sessions.ts";
import { messagePage } from "./views/message-page.ts";

export { CONSOLE_PATH } from "./paths.ts";

export interface ConsoleOptions {
  register: EventRegister;
  /** Who may sign in, each with a role (OPERATORS_FILE and ADMIN_TOKEN); roles are read from here on every request. */
  operators: readonly OperatorEntry[];
  /** The platforms' intake and settings: "Map again" on a platform delivery uses them. */
  webhooks: PlatformWebhooks;
  /** CONSOLE_SESSION_IDLE_MS and CONSOLE_SESSION_MAX_MS; 30 minutes and 8 hours when absent. */
  sessionLifetime?: SessionLifetime;
  now: () => number;
}

/**
 * The support console: server-rendered pages under /console, registered with
 * that prefix as one encapsulated plugin, so its form parser, security
 * headers, error pages and session hook apply to it alone.
 */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const sessions = new ConsoleSessions({
    store: options.register.sessions,
    operators: options.operators,
    lifetime: options.sessionLifetime ?? DEFAULT_SESSION_LIFETIME,
    now: options.now,
  });
  app.decorateRequest("consoleUser", undefined);
  // Cookies are read here only: the API authenticates by bearer token and never looks at one.
  await app.register(fastifyCookie);
  await acceptFormBodies(app);
  app.addHook("onSend", addSecurityHeaders);
  app.addHook("onRequest", async (request) => {
    if (request.method === "POST") checkOrigin(request);
  });
  app.setErrorHandler(consoleErrorPage);
  app.setNotFoundHandler(async (request, reply) =>
    sendPage(
      reply,
      404,
      messagePage({ title: "Not found", detail: `the console has no page at ${request.url}` }, request.consoleUser),
    ),
  );

  await app.register(assetRoutes);
  await app.register(signInRoutes, { sessions });
  await app.register(async (signedIn) => {
    requireSession(signedIn, sessions);
    await signedIn.register(eventRoutes, { register: options.register, now: options.now });
    await signedIn.register(replayRoutes, { register: options.register, now: options.now });
    await signedIn.register(deliveryRoutes, { register: options.register, webhooks: options.webhooks });
    signedIn.post("/sign-out", { schema: { hide: true } }, async (request, reply) => {
      await sessions.signOut(signedInOf(request).session);
      clearCookie(reply, SESSION_COOKIE, overTls(request));
      return reply.redirect(consolePaths.signIn, 303);
    });
  });
}

/**
 * Every route registered in `app` needs a live session: a page is sent to
 * sign-in (and back after it), a POST is refused. Every POST must then carry
 * its session's CSRF token, checked once the form is read.
 */
function requireSession(app: FastifyInstance, sessions: ConsoleSessions): void {
  app.addHook("onRequest", async (request, reply) => {
    const id = cookieOf(request, SESSION_COOKIE, overTls(request));
    request.consoleUser = await sessions.resolve(id);
    if (request.consoleUser !== undefined) return;
    // An ended session's cookie opens nothing: the browser may as well forget it.
    if (id !== undefined) clearCookie(reply, SESSION_COOKIE, overTls(request));
    if (request.method === "GET" || request.method === "HEAD") {
      return reply.redirect(withQuery(consolePaths.signIn, { next: request.url }), 303);
    }
    throw new ConsoleError(
      401,
      "Signed out",
      "your session has ended or was never started; sign in again. Nothing was changed",
    );
  });
  app.addHook("preHandler", async (request) => {
    if (request.method === "POST") checkCsrf(signedInOf(request).session.csrfToken, formOf(request));
  });
}

/** Every failure as a page: the console's own refusals as they are, anything else by the gateway's problem catalogue. */
function consoleErrorPage(
  error: FastifyError | ConsoleError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const page = error instanceof ConsoleError ? error : fromCatalogue(error, request);
  if (page.status >= 500) request.log.error({ err: error }, "console request failed");
  if (page.options.retryAfterSeconds !== undefined) reply.header("retry-after", String(page.options.retryAfterSeconds));
  return sendPage(
    reply,
    page.status,
    messagePage({ title: page.title, detail: page.detail, link: page.options.link }, request.consoleUser),
  );
}

function fromCatalogue(error: Error, request: FastifyRequest): ConsoleError {
  const code = problemCodeFor(error);
  const { status, title } = problems[code];
  const detail =
    code === "GW_ERR_BODY_TOO_LARGE"
      ? `a console form is at most ${FORM_BODY_LIMIT / 1024} KiB`
      : code === "GW_ERR_STORAGE_UNAVAILABLE"
        ? "the event register is unavailable; nothing was changed, try again in a moment"
        : status >= 500
          ? `something went wrong in the gateway; its log has the details under correlation id ${request.id}`
          : "the request could not be read; go back and try again";
  return new ConsoleError(status, title, detail);
}
