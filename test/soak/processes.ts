import { once } from "node:events";
import { createServer } from "node:net";
import { type Server, type ServerSpec, startServer, stopServer } from "../bench/processes.ts";

/**
 * One server of the soak (a gateway or the 1C emulator) as a real child
 * process on a fixed port, so that clients and the gateways' ONEC_URL stay
 * valid across `kill -9` and restart. Each life writes its own log file.
 */
export class Supervised {
  readonly name: string;
  readonly url: string;
  readonly logFiles: string[] = [];
  readonly #spec: (life: number) => ServerSpec;
  readonly #logDir: string;
  #server: Server | undefined;
  #lives = 0;
  /** Kills and restarts of one process run one after another, never interleaved. */
  #queue: Promise<void> = Promise.resolve();

  constructor(name: string, port: number, logDir: string, spec: (life: number) => ServerSpec) {
    this.name = name;
    this.url = `http://127.0.0.1:${port}`;
    this.#spec = spec;
    this.#logDir = logDir;
  }

  get kills(): number {
    return Math.max(0, this.#lives - 1);
  }

  start(): Promise<void> {
    return this.#enqueue(() => this.#startLife());
  }

  /** SIGKILL, wait for the exit, optionally stay down a while, then start again and wait until it listens. */
  killAndRestart(downMs = 0): Promise<void> {
    return this.#enqueue(async () => {
      const child = this.#server?.child;
      if (child !== undefined && child.exitCode === null && child.signalCode === null) {
        const exited = once(child, "exit");
        child.kill("SIGKILL");
        await exited;
      }
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      await this.#startLife();
    });
  }

  /** SIGTERM, as an operator stops it; SIGKILL after a grace period. */
  stop(): Promise<void> {
    return this.#enqueue(async () => {
      if (this.#server !== undefined) await stopServer(this.#server.child);
    });
  }

  async #startLife(): Promise<void> {
    this.#lives += 1;
    const server = await startServer(this.#spec(this.#lives), this.#logDir);
    if (server.url !== this.url) throw new Error(`${this.name} listens on ${server.url}, expected ${this.url}`);
    this.logFiles.push(server.logFile);
    this.#server = server;
  }

  #enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(step);
    // A failed step must not wedge the queue for the steps after it; the caller still sees the error.
    this.#queue = next.catch(() => {});
    return next;
  }
}

/** `count` distinct ports free right now (held open together, so never the same one twice); bound for the whole run. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer().listen(0, "127.0.0.1"));
  await Promise.all(servers.map((server) => once(server, "listening")));
  const ports = servers.map((server) => {
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
