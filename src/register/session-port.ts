/** The console sessions' part of the register's contract (port.ts holds the events'). */

/**
 * Server-side console sessions. The cookie carries a random id; only its
 * SHA-256 digest is stored, so a copy of the database opens no session.
 * A session names its operator and a digest of the credential it was opened
 * with; the role and the credential are checked against the configuration
 * on every request, so a rotated token or a changed OPERATORS_FILE takes
 * effect at restart.
 *
 * A session ends at the first of two deadlines: `maxMs` after it began
 * (absolute), or `idleMs` after its last use (idle). `now` is the caller's
 * clock; PostgreSQL on its database clock (the default) stamps and compares
 * with the database's now() instead, as it does leases and due times.
 */
export interface SessionStore {
  /** Begins a session at `now`; returns it as stored, with the times the store stamped. */
  create(session: NewConsoleSession, now: number): Promise<ConsoleSession>;
  /**
   * The session if it is live at `now` (before both deadlines). Finding it is
   * a use: its last use moves to `now`, written only once it is
   * SESSION_USE_STEP_MS old, so a page view is not a write.
   */
  find(idDigest: string, now: number): Promise<ConsoleSession | undefined>;
  /** Sign-out: gone at once, on every instance. */
  delete(idDigest: string): Promise<void>;
  /** Removes sessions past either deadline; returns how many. */
  purgeExpired(now: number): Promise<number>;
}

/**
 * How stale a session's recorded last use may get before a find writes it
 * again: the idle deadline then comes up to this much early, never late.
 */
export const SESSION_USE_STEP_MS = 60_000;

/** What a sign-in asks the store to keep. */
export interface NewConsoleSession {
  idDigest: string;
  operator: string;
  /** SHA-256 (hex) of the operator's configured token digest at sign-in. */
  credentialDigest: string;
  /** The synchronizer token every form posts back (CSRF). */
  csrfToken: string;
  /** The idle timeout: the session ends this long after its last use. */
  idleMs: number;
  /** The absolute timeout: the session ends this long after it began, however busy. */
  maxMs: number;
}

export interface ConsoleSession extends Omit<NewConsoleSession, "maxMs"> {
  createdAt: number;
  /** The absolute deadline: createdAt + maxMs. */
  expiresAt: number;
  /** The last use as recorded (up to SESSION_USE_STEP_MS behind the real one). */
  lastUsedAt: number;
}
