import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync, readFileSync, watch } from "node:fs";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
const STARTUP_LIMIT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

/** Every child not yet exited, so a failure or Ctrl-C anywhere can still stop them all. */
const running = new Set<ChildProcess>();

export interface Server {
  readonly name: string;
  readonly url: string;
  readonly child: ChildProcess;
  /** The file holding the child's stdout and stderr. */
  readonly logFile: string;
}

export interface ScriptSpec {
  readonly name: string;
  /** Script path relative to the repository root, run with `node --import tsx`. */
  readonly script: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface ServerSpec extends ScriptSpec {
  /** Returns the server's base URL when a stdout line announces that it listens. */
  readonly listeningUrl: (line: string) => string | undefined;
}

export interface ScriptRun {
  readonly exitCode: number | null;
  readonly stdout: string;
  /** The file holding the script's stderr. */
  readonly logFile: string;
}

export function emulatorSpec(name = "onec-emulator"): ServerSpec {
  return {
    name,
    script: "src/onec-emulator/main.ts",
    // Port 0: the emulator prints the port it got, so there is no pick-then-bind race.
    env: { ONEC_EMULATOR_PORT: "0", ONEC_EMULATOR_HOST: "127.0.0.1" },
    listeningUrl: (line) => line.match(/^1C emulator listening on (\S+)/)?.[1],
  };
}

/**
 * Starts a server in its own process and resolves once it says it listens.
 * Its output goes straight to a file, not through a pipe to us: the load
 * generator runs in this process, and draining the gateway's per-request log
 * lines here would steal CPU from it during the gateway's run only.
 */
export async function startServer(spec: ServerSpec, logDir: string): Promise<Server> {
  const logFile = join(logDir, `${spec.name}.log`);
  const child = spawnScript(spec, logFile, logFile);
  try {
    const url = await waitForListening(spec, logFile, child);
    return { name: spec.name, url, child, logFile };
  } catch (error) {
    await stopServer(child);
    throw error;
  }
}

/** Runs a script to its end; stdout and stderr go to files, as for servers, and stdout is read back after. */
export async function runScript(spec: ScriptSpec, logDir: string): Promise<ScriptRun> {
  const outFile = join(logDir, `${spec.name}.out`);
  const logFile = join(logDir, `${spec.name}.log`);
  const child = spawnScript(spec, outFile, logFile);
  await once(child, "exit");
  return { exitCode: child.exitCode, stdout: readFileSync(outFile, "utf8"), logFile };
}

function spawnScript(spec: ScriptSpec, outFile: string, errFile: string): ChildProcess {
  const out = openSync(outFile, "w");
  const err = outFile === errFile ? out : openSync(errFile, "w");
  const child = spawn(process.execPath, ["--import", "tsx", spec.script], {
    cwd: ROOT,
    env: { ...process.env, ...spec.env },
    stdio: ["ignore", out, err],
  });
  // The child holds its own copies.
  closeSync(out);
  if (err !== out) closeSync(err);
  running.add(child);
  child.once("exit", () => running.delete(child));
  return child;
}

/** Event-driven: re-reads the log whenever it changes, so no fixed sleeps. */
function waitForListening(spec: ServerSpec, logFile: string, child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const watcher = watch(logFile);
    const timer = setTimeout(() => fail(`did not start listening within ${STARTUP_LIMIT_MS} ms`), STARTUP_LIMIT_MS);
    const onExit = (code: number | null, signal: string | null) => fail(`exited (${signal ?? code}) before listening`);
    const finish = () => {
      watcher.close();
      clearTimeout(timer);
      child.off("exit", onExit);
    };
    function fail(why: string): void {
      finish();
      reject(new Error(`${spec.name} ${why}; its output:\n${tail(logFile)}`));
    }
    function check(): void {
      const url = readFileSync(logFile, "utf8").split("\n").map(spec.listeningUrl).find(Boolean);
      if (url === undefined) return;
      finish();
      resolve(url);
    }
    watcher.on("change", check);
    watcher.on("error", (error) => fail(`log watch failed: ${error.message}`));
    child.once("exit", onExit);
    check(); // the line may have been written before the watcher started
  });
}

/** SIGTERM for a graceful close, SIGKILL if that takes too long. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...running].map(stopServer));
}

export function tail(file: string, chars = 2000): string {
  try {
    return readFileSync(file, "utf8").slice(-chars);
  } catch {
    return "(no output)";
  }
}
