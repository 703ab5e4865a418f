import pino, { type DestinationStream } from "pino";

/**
 * The gateway's standard output: the lines logged in one turn of the event
 * loop are written together at its end, with one blocking write.
 *
 * pino's own default for stdout is asynchronous: lines wait in memory for a
 * write in libuv's pool, however long that takes, so the last ones before a
 * crash or a SIGKILL were lost: the very lines that say what happened. Under
 * load it was also dear: each line logged while a write was out went onto
 * one growing string that sonic-boom measured, and so copied, on every line
 * (some 5 KB of garbage per request with 50 in flight). pino's synchronous
 * mode writes each line as it is logged: a system call per request, and a
 * write to a file can wait behind the register's fsyncs on the same disk
 * (7–10 % of a busy gateway's main thread in a profile of the bench).
 *
 * Here a line waits at most for the end of its turn, and a turn's lines (up
 * to one per request in flight) cost one write. sonic-boom, synchronous,
 * still does the writing (a partial write, EAGAIN on a non-blocking pipe).
 * A slow reader holds the event loop rather than growing the heap.
 */
export class TurnBatchedOutput implements DestinationStream {
  readonly #out = pino.destination({ dest: 1, sync: true });
  #lines: string[] = [];
  #scheduled = false;

  constructor() {
    // A process that exits in the turn it logged in still writes that turn's lines.
    process.once("exit", () => this.flushSync());
  }

  write(line: string): void {
    this.#lines.push(line);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.#endOfTurn);
  }

  /** Writes the lines waiting for the end of the turn, now: the exit's call. */
  flushSync(): void {
    if (this.#lines.length === 0) return;
    const text = this.#lines.length === 1 ? (this.#lines[0] as string) : this.#lines.join("");
    this.#lines = [];
    this.#out.write(text);
  }

  /** What pino's logger.flush(callback) calls. */
  flush(callback?: (error?: Error) => void): void {
    this.flushSync();
    callback?.();
  }

  readonly #endOfTurn = (): void => {
    this.#scheduled = false;
    this.flushSync();
  };
}
