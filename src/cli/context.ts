/** What a command may touch outside itself; main.ts supplies the real process. */
export interface CliContext {
  /** Writes one line (or several) to stdout. */
  out(text: string): void;
  /** Writes one line (or several) to stderr. */
  err(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface Command {
  name: string;
  /** How it is called, for the tool's help. */
  synopsis: string;
  /** What it does, in a few words. */
  summary: string;
  /** The command's own --help text. */
  help: string;
  /** Parses argv (after the command name), does the work, returns the exit code. */
  run(argv: string[], context: CliContext): Promise<number>;
}

/** Bad arguments: the command's usage goes to stderr and the exit code is 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The command could not do its job for a reason worth one line: exit code 1. */
export class CliFailure extends Error {
  override readonly name = "CliFailure";
}
