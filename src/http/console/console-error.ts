/**
 * A refusal the console answers with a page of its own: a status, a heading
 * and one sentence saying what to do. Thrown from hooks, parsers and
 * handlers; the console's error handler renders it.
 */
export class ConsoleError extends Error {
  override readonly name = "ConsoleError";

  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly options: { retryAfterSeconds?: number; link?: { href: string; text: string } } = {},
  ) {
    super(`${status} ${title}: ${detail}`);
  }
}
