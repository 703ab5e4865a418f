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
  /** Script path relative to the repository root: a .ts runs with `node --import tsx`, a .js (dist/) with node alone. */
  readonly script: string;
  readonly env: Readonly<Record<string, string>>;
  /** Node options before the script, e.g. --cpu-prof. */
  readonly nodeArgs?: readonly string[];
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

/** A script started and ready (it sent "ready" over IPC), waiting for go() to begin its measured work. */
export interface ReadyScript {
  /** Sends "go" and resolves when the script has exited. */
  go(): Promise<ScriptRun>;
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

/**
 * Starts a script that sends "ready" over IPC once set up and then waits for
 * "go" (drain-worker.ts): several can be made ready one by one and started at
 * one instant, so none of them works alone while another is still starting.
 * Stdout and stderr go to files, as for servers; stdout is read back at the end.
 */
export async function startScript(spec: ScriptSpec, logDir: string): Promise<ReadyScript> {
  const outFile = join(logDir, `${spec.name}.out`);
  const logFile = join(logDir, `${spec.name}.log`);
  const child = spawnScript(spec, outFile, logFile, true);
  const exited = once(child, "exit");
  const ready = await Promise.race([once(child, "message").then(([message]) => message === "ready"), exited]);
  if (ready !== true) {
    await stopServer(child);
    throw new Error(
      `${spec.name} exited (${child.signalCode ?? child.exitCode}) before it was ready; its output:\n${tail(logFile)}`,
    );
  }
  return {
    async go() {
      child.send("go");
      await exited;
      return { exitCode: child.exitCode, stdout: readFileSync(outFile, "utf8"), logFile };
    },
  };
}

function spawnScript(spec: ScriptSpec, outFile: string, errFile: string, ipc = false): ChildProcess {
  const out = openSync(outFile, "w");
  const err = outFile === errFile ? out : openSync(errFile, "w");
  const loader = spec.script.endsWith(".ts") ? ["--import", "tsx"] : [];
  const child = spawn(process.execPath, [...(spec.nodeArgs ?? []), ...loader, spec.script], {
    cwd: ROOT,
    env: { ...process.env, ...spec.env },
    stdio: ipc ? ["ignore", out, err, "ipc"] : ["ignore", out, err],
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
