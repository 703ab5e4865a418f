import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { type OperatorEntry, type Principal, principalOf } from "../../config/operators.ts";
import type { ConsoleSession, SessionStore } from "../../register/session-port.ts";
import type { CookieSpec } from "./cookies.ts";
import { CONSOLE_PATH, consolePaths } from "./paths.ts";

/** How long a console session may last, and stay unused (CONSOLE_SESSION_MAX_MS, CONSOLE_SESSION_IDLE_MS). */
export interface SessionLifetime {
  idleMs: number;
  maxMs: number;
}

/**
 * OWASP ASVS 4.0.3 V3.3.2 at level 2 asks for sign-in again after at most 30
 * minutes unused and 12 hours in all. Here: 30 minutes, and 8 hours, a
 * support desk's shift. A forgotten tab closes itself within half an hour.
 */
export const DEFAULT_SESSION_LIFETIME: SessionLifetime = { idleMs: 30 * 60_000, maxMs: 8 * 3600_000 };

/** The session cookie: a browser session's cookie (no Max-Age); the server ends the session itself. */
export const SESSION_COOKIE: CookieSpec = { name: "gateway_console", path: CONSOLE_PATH };

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

/** Whether a cookie's value can be one of ours at all (a session id, a sign-in form's token). */
export function isToken(value: string | undefined): value is string {
  return value !== undefined && TOKEN_PATTERN.test(value);
}

/** What the register stores instead of the session id: a copy of the database opens no session. */
export function sessionDigest(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("hex");
}

/**
 * What binds a session to the credential that opened it: the SHA-256 of the
 * operator's configured token digest. A rotated token has another one, so
 * the sessions it opened end at the restart that loads it.
 */
function credentialDigest(operator: OperatorEntry): string {
  return createHash("sha256").update(operator.tokenSha256).digest("hex");
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
  lifetime: SessionLifetime;
  now: () => number;
}

/**
 * Sign-in, the session behind each request, sign-out. The cookie carries a
 * random id, the register its digest, the operator's name and a digest of
 * the operator's credential; the role and the credential come from the
 * configuration on every request, so someone removed from OPERATORS_FILE, or
 * whose token was rotated, is signed out at the next restart.
 */
export class ConsoleSessions {
  readonly #options: ConsoleSessionsOptions;
  /** Each operator by name, with the digest of its credential: computed once, not on every request. */
  readonly #operators: ReadonlyMap<string, { principal: Principal; credential: string }>;

  constructor(options: ConsoleSessionsOptions) {
    this.#options = options;
    this.#operators = new Map(
      options.operators.map((operator) => [
        operator.name,
        { principal: { name: operator.name, role: operator.role }, credential: credentialDigest(operator) },
      ]),
    );
  }

  /** A new session for the token's owner, or undefined for a token that is nobody's (compared in constant time). */
  async signIn(token: string): Promise<{ id: string; user: SignedIn } | undefined> {
    const principal = principalOf(token, this.#options.operators);
    const operator = principal === undefined ? undefined : this.#operators.get(principal.name);
    if (principal === undefined || operator === undefined) return undefined;
    const { store, lifetime } = this.#options;
    const now = this.#options.now();
    // Sign-ins are rare: expired sessions are cleared here as well as by the retention purge.
    await store.purgeExpired(now);
    const id = randomToken();
    const session = await store.create(
      {
        idDigest: sessionDigest(id),
        operator: principal.name,
        credentialDigest: operator.credential,
        csrfToken: randomToken(),
        idleMs: lifetime.idleMs,
        maxMs: lifetime.maxMs,
      },
      now,
    );
    return { id, user: { principal, session } };
  }

  /**
   * The live session a cookie names, with its operator's current role;
   * undefined when signed out, expired (idle or absolute), or opened with a
   * credential the configuration no longer holds.
   */
  async resolve(id: string | undefined): Promise<SignedIn | undefined> {
    if (!isToken(id)) return undefined;
    const session = await this.#options.store.find(sessionDigest(id), this.#options.now());
    if (session === undefined) return undefined;
    const operator = this.#operators.get(session.operator);
    if (operator === undefined || !sameDigest(operator.credential, session.credentialDigest)) {
      // Its credential is gone: the session can never be used again, so it goes now.
      await this.#options.store.delete(session.idDigest);
      return undefined;
    }
    return { principal: operator.principal, session };
  }

  /** Gone at once for every gateway instance on the register. */
  async signOut(session: ConsoleSession): Promise<void> {
    await this.#options.store.delete(session.idDigest);
  }
}

function sameDigest(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
