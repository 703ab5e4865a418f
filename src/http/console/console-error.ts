/** What the page adds besides its status and text: a Retry-After, a link onward. */
export interface ConsoleErrorOptions {
  retryAfterSeconds?: number;
  link?: { href: string; text: string };
}

/**
 * A refusal the console answers with a page of its own: a status, a heading
 * and one sentence saying what to do. Thrown from hooks, parsers and
 * handlers; the console's error handler renders it.
 */
export class ConsoleError extends Error {
  override readonly name = "ConsoleError";

  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly options: ConsoleErrorOptions;

  // Fields assigned by hand, not constructor parameter properties: Node's type
  // stripping (`node src/…` on Node 22.18+) refuses those; tsconfig's
  // erasableSyntaxOnly keeps them out of the sources.
  constructor(status: number, title: string, detail: string, options: ConsoleErrorOptions = {}) {
    super(`${status} ${title}: ${detail}`);
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.options = options;
  }
}
