import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { type OperatorEntry, type Principal, principalOf } from "../../config/operators.ts";
import type { ConsoleSession, SessionStore } from "../../register/port.ts";
import type { CookieSpec } from "./cookies.ts";
import { CONSOLE_PATH, consolePaths } from "./paths.ts";

/** A working day: signing in once a shift is enough, and a forgotten tab does not stay open for days. */
export const SESSION_LIFETIME_MS = 8 * 3600 * 1000;

/** The session cookie: the console's paths only, never sent to the API or to another site's request. */
export const SESSION_COOKIE: CookieSpec = {
  name: "gateway_console",
  path: CONSOLE_PATH,
  maxAgeSeconds: SESSION_LIFETIME_MS / 1000,
};

/**
 * Before a session exists, the sign-in form is protected by a double-submit
 * token: this cookie holds it and the form posts it back, so another site
 * cannot sign a browser in under someone else's token.
 */
export const SIGN_IN_COOKIE: CookieSpec = {
  name: "gateway_console_sign_in",
  path: consolePaths.signIn,
  maxAgeSeconds: 3600,
};

/** 32 random bytes as base64url: what session ids and CSRF tokens look like. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

/** What the register stores instead of the session id: a copy of the database opens no session. */
export function sessionDigest(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("hex");
}

/** Whether a posted token is the expected one, compared in constant time. */
export function tokensMatch(expected: string, sent: string | undefined): boolean {
  if (sent === undefined || !TOKEN_PATTERN.test(sent) || !TOKEN_PATTERN.test(expected)) return false;
  return timingSafeEqual(Buffer.from(expected, "utf8"), Buffer.from(sent, "utf8"));
}

/** Who is signed in, as every console page sees it. */
export interface SignedIn {
  principal: Principal;
  session: ConsoleSession;
}

export interface ConsoleSessionsOptions {
  store: SessionStore;
  operators: readonly OperatorEntry[];
  now: () => number;
}

/**
 * Sign-in, the session behind each request, sign-out. The cookie carries a
 * random id, the register its digest and the operator's name; the role comes
 * from the configuration on every request, so someone removed from
 * OPERATORS_FILE is signed out at the next restart.
 */
export class ConsoleSessions {
  readonly #options: ConsoleSessionsOptions;

  constructor(options: ConsoleSessionsOptions) {
    this.#options = options;
  }

  /** A new session for the token's owner, or undefined for a token that is nobody's (compared in constant time). */
  async signIn(token: string): Promise<{ id: string; user: SignedIn } | undefined> {
    const principal = principalOf(token, this.#options.operators);
    if (principal === undefined) return undefined;
    const now = this.#options.now();
    // Sign-ins are rare: expired sessions are cleared here rather than on a timer.
    await this.#options.store.purgeExpired(now);
    const id = randomToken();
    const session: ConsoleSession = {
      idDigest: sessionDigest(id),
      operator: principal.name,
      csrfToken: randomToken(),
      createdAt: now,
      expiresAt: now + SESSION_LIFETIME_MS,
    };
    await this.#options.store.create(session);
    return { id, user: { principal, session } };
  }

  /** The live session a cookie names, with its operator's current role; undefined when signed out or expired. */
  async resolve(id: string | undefined): Promise<SignedIn | undefined> {
    if (id === undefined || !TOKEN_PATTERN.test(id)) return undefined;
    const session = await this.#options.store.find(sessionDigest(id), this.#options.now());
    if (session === undefined) return undefined;
    const operator = this.#options.operators.find((entry) => entry.name === session.operator);
    if (operator === undefined) return undefined;
    return { principal: { name: operator.name, role: operator.role }, session };
  }

  /** Gone at once for every gateway instance on the register. */
  async signOut(session: ConsoleSession): Promise<void> {
    await this.#options.store.delete(session.idDigest);
  }
}
