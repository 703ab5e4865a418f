import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";

const repoRoot = new URL("../../", import.meta.url).pathname;

export interface GatewayProcess {
  url: string;
  child: ChildProcess;
  /** stdout and stderr lines so far, for diagnostics. */
  output: string[];
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * The production entry (`src/main.ts`) as a real child process on 127.0.0.1,
 * ready once it logs the address it listens on.
 */
export async function spawnGateway(env: Record<string, string>, timeoutMs = 20_000): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: repoRoot,
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ALLOW_ANONYMOUS: "true", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => output.push(line));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${output.join("\n")}`)), timeoutMs);
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
    kill: async (signal = "SIGKILL") => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill(signal);
      await exited;
    },
  };
}
