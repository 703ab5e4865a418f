/**
 * `npm start` runs the built JavaScript with plain node: the production
 * server, started on exactly the start script's command line, is one node
 * process running dist/main.js, with no npm or tsx around it, and no module of
 * tsx (nor any TypeScript source) loaded in any of its threads.
 *
 * What was loaded is asked of the running process itself, through its
 * inspector: SIGUSR1 opens it (Node's own signal for that; on 127.0.0.1 and, by
 * NODE_OPTIONS=--inspect-port=0, a free port, not 9229, which something else may
 * hold), and V8 then reports every script it holds (Debugger.scriptParsed), on the
 * main thread and, through NodeWorker, on the writer thread. On the old start
 * (`node --import tsx src/main.ts`) both hold tsx's modules and .ts files.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { WebSocket } from "undici";
import { afterAll, describe, expect, it } from "vitest";
import { type GatewayProcess, spawnGateway } from "../support/process.ts";
import { START_ENTRY, startArgs } from "../support/start-script.ts";
import { tempDir } from "../support/temp.ts";

const rootUrl = new URL("../../", import.meta.url).href;

describe("npm start runs the built JavaScript", { timeout: 60_000 }, () => {
  const dir = tempDir();
  let gateway: GatewayProcess | undefined;
  afterAll(async () => {
    await gateway?.kill();
    dir.remove();
  });

  it("is one node process on dist/main.js, with no tsx module or TypeScript source loaded", async () => {
    gateway = await spawnGateway({
      DATABASE_URL: join(dir.path, "gateway.db"),
      ONEC_URL: "http://127.0.0.1:9/1c",
      // Where SIGUSR1 opens the inspector: a free port, so a busy 9229 cannot fail the test. In the
      // environment, not on the command line, which must be the start script's own (asserted below).
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --inspect-port=0`.trim(),
    });
    const ready = await fetch(`${gateway.url}/readyz`);
    expect(ready.status).toBe(200);
    const pid = gateway.child.pid;
    if (pid === undefined) throw new Error("no pid");

    // The process tree: node itself on the start script's arguments, our own child, with no child of its own.
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, -1);
    expect(basename(argv[0] ?? "")).toBe("node");
    expect(argv.slice(1)).toEqual(startArgs());
    expect(argv.at(-1)).toBe(START_ENTRY);
    expect(parentPid(pid)).toBe(process.pid);
    expect(childPids(pid)).toEqual([]);

    const scripts = await loadedScripts(gateway);
    const ours = (list: string[]) =>
      list.filter((url) => url.startsWith(rootUrl)).map((url) => url.slice(rootUrl.length));
    for (const list of [scripts.main, ...scripts.workers.map((worker) => worker.scripts)]) {
      expect(list.length).toBeGreaterThan(0);
      expect(list.filter((url) => /\/node_modules\/(tsx|esbuild|typescript)\//.test(url))).toEqual([]);
      expect(list.filter((url) => /\.[cm]?ts$/.test(url))).toEqual([]);
      expect(ours(list).filter((path) => !path.startsWith("dist/") && !path.startsWith("node_modules/"))).toEqual([]);
    }
    expect(ours(scripts.main)).toContain(START_ENTRY);
    // One other thread, the register's writer (a thread, not a process), on the built module too.
    expect(scripts.workers.map((worker) => worker.url.slice(rootUrl.length))).toEqual([
      "dist/register/sqlite/writer-thread.js",
    ]);
  });
});

function parentPid(pid: number): number {
  // /proc/PID/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after its closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** Every process whose parent is `pid`, from any of its threads. */
function childPids(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
    readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
  );
}

interface LoadedScripts {
  main: string[];
  workers: { url: string; scripts: string[] }[];
}

/** Opens the process's inspector (SIGUSR1) and lists the URLs of the scripts V8 holds in each thread. */
async function loadedScripts(gateway: GatewayProcess): Promise<LoadedScripts> {
  const seen = gateway.output.length;
  gateway.child.kill("SIGUSR1");
  const wsUrl = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      for (const line of gateway.output.slice(seen)) {
        const match = /Debugger listening on (ws:\/\/\S+)/.exec(line);
        if (match?.[1] !== undefined) done(() => resolve(match[1] as string));
        if (/Starting inspector on .* failed/.test(line)) done(() => reject(new Error(line)));
      }
    }, 20);
    const limit = setTimeout(() => done(() => reject(new Error("the inspector did not open"))), 10_000);
    const done = (settle: () => void) => {
      clearInterval(timer);
      clearTimeout(limit);
      settle();
    };
  });

  const socket = new WebSocket(wsUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true });
    socket.addEventListener("error", reject, { once: true });
  });
  try {
    return await collect(socket);
  } finally {
    socket.close();
  }
}

async function collect(socket: WebSocket): Promise<LoadedScripts> {
  const main: string[] = [];
  const workers = new Map<string, { url: string; scripts: string[] }>();
  const replies = new Map<number, () => void>();
  let nextId = 1;
  const call = (method: string, params: object = {}) =>
    new Promise<void>((resolve) => {
      const id = nextId++;
      replies.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  const workerReplies = new Map<string, () => void>();

  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      method?: string;
      params?: Record<string, unknown>;
    };
    if (message.id !== undefined) replies.get(message.id)?.();
    if (message.method === "Debugger.scriptParsed") main.push(String(message.params?.url ?? ""));
    if (message.method === "NodeWorker.attachedToWorker") {
      const sessionId = String(message.params?.sessionId);
      const info = message.params?.workerInfo as { url: string };
      workers.set(sessionId, { url: info.url, scripts: [] });
    }
    if (message.method === "NodeWorker.receivedMessageFromWorker") {
      const sessionId = String(message.params?.sessionId);
      const inner = JSON.parse(String(message.params?.message)) as {
        id?: number;
        method?: string;
        params?: { url?: string };
      };
      if (inner.method === "Debugger.scriptParsed") workers.get(sessionId)?.scripts.push(inner.params?.url ?? "");
      if (inner.id !== undefined) workerReplies.get(sessionId)?.();
    }
  });

  // Debugger.enable reports every script already parsed before it answers.
  await call("Debugger.enable");
  await call("NodeWorker.enable", { waitForDebuggerOnStart: false });
  // The attach events come with or just after the answer; the gateway has its writer thread from the start.
  for (let waited = 0; workers.size === 0 && waited < 5_000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const sessionId of workers.keys()) {
    const answered = new Promise<void>((resolve) => workerReplies.set(sessionId, resolve));
    await call("NodeWorker.sendMessageToWorker", {
      sessionId,
      message: JSON.stringify({ id: 1, method: "Debugger.enable" }),
    });
    await answered;
  }
  return { main, workers: [...workers.values()].map(({ url, scripts }) => ({ url, scripts })) };
}
