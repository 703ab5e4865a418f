/**
 * The database's clock as this process reads it. On the clock source
 * "database" (statements.ts, ClockSource) rows are stamped with the
 * database's now(), so a difference between one of their times and "now"
 * (the Retry-After of a 202) must be taken on that clock: against Date.now()
 * it was off by the skew between the two hosts, a Retry-After of ten minutes
 * for an event due now, or 1 s for one due in a minute.
 *
 * The statements a request's answer is made of return the database's time
 * with their rows (statements.ts, Timed); each one seen sets the offset, as
 * its answer arrives. The answer's way back is not counted: this clock runs
 * behind the database's by that much (milliseconds), so a Retry-After is
 * never shorter than the database-side difference.
 */
export class DatabaseClock {
  readonly #local: () => number;
  #offsetMs = 0;

  /** `local`: this process's clock. */
  constructor(local: () => number = () => Date.now()) {
    this.#local = local;
  }

  /** A time the database returned just now (a row's `database_now`). */
  observe(databaseNow: number): void {
    this.#offsetMs = databaseNow - this.#local();
  }

  /** The database's time now, as far as this process knows it. */
  now(): number {
    return this.#local() + this.#offsetMs;
  }
}
