import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { startArgs } from "./start-script.ts";
import { tempDir } from "./temp.ts";

const repoRoot = new URL("../../", import.meta.url).pathname;

export interface GatewayProcess {
  url: string;
  child: ChildProcess;
  /** stdout and stderr lines so far, for diagnostics. */
  output: string[];
  /** The first stdout line matching `pattern`, already written or still to come. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * The production server (`npm start`'s command line: dist/main.js) as a real child process on 127.0.0.1,
 * ready once it logs the address it listens on.
 */
export async function spawnGateway(env: Record<string, string>, timeoutMs = 20_000): Promise<GatewayProcess> {
  const child = spawn(process.execPath, startArgs(), {
    cwd: repoRoot,
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ALLOW_ANONYMOUS: "true", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => output.push(line));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left behind: a gateway that never said it listens may still be starting.
      child.kill("SIGKILL");
      reject(new Error(`gateway did not start:\n${output.join("\n")}`));
    }, timeoutMs);
    lines.on("line", (line) => {
      output.push(line);
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}:\n${output.join("\n")}`));
    });
  });
  return {
    url,
    child,
    output,
    waitForLine: (pattern, waitMs = 10_000) =>
      new Promise<string>((resolve, reject) => {
        const written = output.find((line) => pattern.test(line));
        if (written !== undefined) return resolve(written);
        const onLine = (line: string) => {
          if (!pattern.test(line)) return;
          clearTimeout(timer);
          lines.off("line", onLine);
          resolve(line);
        };
        const timer = setTimeout(() => {
          lines.off("line", onLine);
          reject(new Error(`no line matching ${pattern} in ${waitMs} ms:\n${output.join("\n")}`));
        }, waitMs);
        lines.on("line", onLine);
      }),
    kill: async (signal = "SIGKILL") => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill(signal);
      await exited;
    },
  };
}

export interface ProcessHarness {
  /** The 1C emulator, in the test process, that the gateway processes deliver to. */
  readonly onec: OnecEmulator;
  /** A SQLite file in this file's temp folder, shared by the processes given the same name. */
  databasePath(name: string): string;
  /** Starts a gateway process; every one still running is killed after the tests. */
  start(env: Record<string, string>): Promise<GatewayProcess>;
}

/** An emulator, a temp folder and the gateway processes of one test file, cleaned up after it. */
export function gatewayProcesses(): ProcessHarness {
  const dir = tempDir();
  const processes: GatewayProcess[] = [];
  let onec: OnecEmulator | undefined;
  beforeAll(async () => {
    onec = await startOnecEmulator();
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await onec?.close();
    dir.remove();
  });
  return {
    get onec() {
      if (onec === undefined) throw new Error("the emulator starts in beforeAll");
      return onec;
    },
    databasePath: (name) => join(dir.path, name),
    start: async (env) => {
      const started = await spawnGateway(env);
      processes.push(started);
      return started;
    },
  };
}
