import { ConfigError, secretsRead } from "../config/load-config.ts";
import { StorageUnavailableError } from "../register/port.ts";
import { exportCommand } from "./commands/export.ts";
import { importCommand } from "./commands/import.ts";
import { listCommand } from "./commands/list.ts";
import { migrateCommand } from "./commands/migrate.ts";
import { probeCommand } from "./commands/probe.ts";
import { purgeCommand } from "./commands/purge.ts";
import { replayCommand } from "./commands/replay.ts";
import { statusCommand } from "./commands/status.ts";
import { workerCommand } from "./commands/worker.ts";
import { type CliContext, CliFailure, type Command, UsageError } from "./context.ts";

const COMMANDS: readonly Command[] = [
  workerCommand,
  statusCommand,
  listCommand,
  replayCommand,
  probeCommand,
  purgeCommand,
  migrateCommand,
  exportCommand,
  importCommand,
];

export const USAGE = `Usage: gateway <command> [options]

Operates the order gateway from the command line.

Commands:
${commandList()}

Run "gateway <command> --help" for a command's options.

Environment: DATABASE_URL (the gateway's SQLite file, default data/gateway.db);
ONEC_URL and the other 1C settings are needed by \`worker\` only.

Exit codes: 0 done; 1 failed (unknown event, refused replay, configuration or
storage error); 2 bad usage.`;

function commandList(): string {
  const width = Math.max(...COMMANDS.map((command) => command.synopsis.length));
  return COMMANDS.map((command) => `  ${command.synopsis.padEnd(width)}  ${command.summary}`).join("\n");
}

const HELP_FLAGS = new Set(["--help", "-h"]);

/** Runs one command line; returns the process exit code. */
export async function runCli(argv: readonly string[], context: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    context.err(USAGE);
    return 2;
  }
  if (HELP_FLAGS.has(name) || name === "help") {
    const topic = rest[0] === undefined ? undefined : COMMANDS.find((command) => command.name === rest[0]);
    context.out(topic?.help ?? USAGE);
    return 0;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (command === undefined) {
    context.err(`gateway: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  if (wantsHelp(rest)) {
    context.out(command.help);
    return 0;
  }
  try {
    // NAME_FILE read once here: GATEWAY_TOKEN_FILE for replays, ONEC_USER_FILE for the probe, and the rest for loadConfig.
    return await command.run(rest, { ...context, env: secretsRead(context.env) });
  } catch (error) {
    if (error instanceof UsageError) {
      context.err(`gateway ${command.name}: ${error.message}\n\n${command.help}`);
      return 2;
    }
    if (error instanceof ConfigError) {
      context.err(`configuration error: ${error.message}`);
      return 1;
    }
    if (error instanceof CliFailure || error instanceof StorageUnavailableError) {
      context.err(`gateway ${command.name}: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

/** --help anywhere before a `--` terminator. */
function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((arg) => HELP_FLAGS.has(arg));
}
