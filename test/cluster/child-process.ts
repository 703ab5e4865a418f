import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { gatewayBin, startArgs } from "../support/start-script.ts";

const repoRoot = new URL("../../", import.meta.url).pathname;

/** A process of the cluster, known from the moment it is spawned, so that nothing still starting can be left behind. */
export interface Launched<T> {
  readonly child: ChildProcess;
  /** stdout and stderr lines so far, for diagnostics. */
  readonly output: string[];
  /** What its readiness line told (a URL, a lease owner); rejects, the process killed, if it never comes. */
  readonly ready: Promise<T>;
  /** Sends `signal` and resolves once the process has exited (at once if it already has). */
  stop(signal: NodeJS.Signals): Promise<void>;
}

/** `npm start`: the production server. Ready with its URL once Fastify logs that it listens. */
export function launchGateway(env: Record<string, string>, timeoutMs: number): Launched<string> {
  return launch(startArgs(), env, timeoutMs, (log) =>
    typeof log.msg === "string" ? /^Server listening at (\S+)/.exec(log.msg)?.[1] : undefined,
  );
}

/**
 * `npx gateway worker`: the file it runs is the package's own "bin", the built
 * CLI (from the repo root, `npx --no -- gateway --help` prints its usage). It is
 * started with node directly: under npx the worker would be a grandchild, out of
 * reach of the SIGKILL a crash test sends. Ready with the lease owner it claims
 * under, from its "worker started" line.
 */
export function launchWorker(env: Record<string, string>, timeoutMs: number): Launched<string> {
  return launch([gatewayBin(), "worker"], env, timeoutMs, (log) =>
    typeof log.msg === "string" && log.msg.startsWith("worker started") && typeof log.owner === "string"
      ? log.owner
      : undefined,
  );
}

function launch<T>(
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
  readiness: (log: Record<string, unknown>) => T | undefined,
): Launched<T> {
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const stop = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill(signal);
    await exited;
  };
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => output.push(line));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const ready = new Promise<T>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      void stop("SIGKILL");
      reject(new Error(`${args.join(" ")} ${why}:\n${output.join("\n")}`));
    };
    const timer = setTimeout(() => fail(`not ready within ${timeoutMs} ms`), timeoutMs);
    child.once("exit", (code, signal) => fail(`exited (${signal ?? code}) before it was ready`));
    lines.on("line", (line) => {
      output.push(line);
      const told = readiness(parsedLog(line));
      if (told === undefined) return;
      clearTimeout(timer);
      resolve(told);
    });
  });
  // Whoever awaits `ready` sees the failure; this keeps an unawaited one from being an unhandled rejection.
  ready.catch(() => {});
  return { child, output, ready, stop };
}

/** A pino JSON line, or nothing for any other output. */
function parsedLog(line: string): Record<string, unknown> {
  if (!line.startsWith("{")) return {};
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return {};
  }
}
