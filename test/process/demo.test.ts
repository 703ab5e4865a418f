/**
 * `npm run demo`, as README.md promises it: the gateway on loopback with the
 * bundled 1C emulator, printing a curl to try; "run it twice and see `201`
 * then `200` with `Idempotent-Replayed: true`"; HOST is 127.0.0.1 in the demo.
 *
 * The demo runs as package.json's demo script runs it (node, its flags, the
 * entry), a real child process; the test reads the curl it prints, takes the
 * request apart (URL, headers, body) and sends it as curl would.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../support/temp.ts";

const repoRoot = new URL("../../", import.meta.url).pathname;
const README = readFileSync(join(repoRoot, "README.md"), "utf8");

/** What `npm run demo` passes to node: package.json's demo script, read from it. */
function demoArgs(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  };
  const [command, ...args] = (scripts.demo ?? "").trim().split(/\s+/);
  if (command !== "node" || !args.at(-1)?.endsWith(".ts")) {
    throw new Error(`package.json's demo script is not "node [flags] <entry>.ts": ${scripts.demo}`);
  }
  return args;
}

/** The caller's environment without the gateway's own settings: the demo's defaults are what is under test. */
function cleanEnv(): Record<string, string> {
  const settings =
    /^(PORT|HOST|DATABASE_|ONEC_|SYNC_WAIT_MS|SENDER|ALLOW_ANONYMOUS|ADMIN_TOKEN|OPERATORS_FILE|METRICS_|RATE_LIMIT_|SOURCES_FILE|TRUST_PROXY|DELIVERER|LOG_LEVEL|OTEL_)/;
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && !settings.test(entry[0]),
    ),
  );
}

interface Demo {
  child: ChildProcess;
  output: string[];
  /** The addresses the banner names. */
  gatewayUrl: string;
  emulatorUrl: string;
  /** The first curl of the banner ("Send the example event"), its continuation lines joined. */
  curl: string;
}

const running: ChildProcess[] = [];
const dirs: Array<ReturnType<typeof tempDir>> = [];
afterEach(async () => {
  for (const child of running.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
  }
  for (const dir of dirs.splice(0)) dir.remove();
});

/** A directory for the demo's register, removed after the test. */
function demoDir(): string {
  const dir = tempDir("demo-");
  dirs.push(dir);
  return dir.path;
}

function spawnDemo(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, demoArgs(), {
    cwd: repoRoot,
    env: { ...cleanEnv(), DATABASE_URL: join(demoDir(), "gateway.db"), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  return child;
}

/** Starts the demo and resolves once its banner's first curl has been printed in full. */
async function startDemo(env: Record<string, string>): Promise<Demo> {
  const child = spawnDemo(env);
  const output: string[] = [];
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => output.push(line));
  return new Promise<Demo>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the demo printed no curl:\n${output.join("\n")}`)), 30_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the demo exited with ${code}:\n${output.join("\n")}`));
    });
    let curl: string[] | undefined;
    let gatewayUrl: string | undefined;
    let emulatorUrl: string | undefined;
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      output.push(line);
      gatewayUrl ??= /^\s*gateway\s+(http:\/\/\S+)/.exec(line)?.[1];
      emulatorUrl ??= /^\s*1C\s+(http:\/\/\S+)/.exec(line)?.[1];
      const text = line.trim();
      if (curl === undefined && text.startsWith("curl ")) curl = [];
      if (curl === undefined || curl.at(-1)?.endsWith("\\") === false) return;
      curl.push(text);
      if (text.endsWith("\\")) return;
      clearTimeout(timer);
      if (gatewayUrl === undefined || emulatorUrl === undefined) {
        reject(new Error(`the banner names no gateway or 1C address:\n${output.join("\n")}`));
        return;
      }
      resolve({ child, output, gatewayUrl, emulatorUrl, curl: joinContinuations(curl) });
    });
  });
}

function joinContinuations(lines: readonly string[]): string {
  return lines.map((line) => line.replace(/\s*\\$/, "")).join(" ");
}

/** POSIX shell words, for the quoting the demo's curl uses: single quotes, double quotes, bare words. */
function shellWords(command: string): string[] {
  const words: string[] = [];
  for (const match of command.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s'"]+)/g)) {
    words.push(match[1] ?? match[2]?.replace(/\\(.)/g, "$1") ?? match[3] ?? "");
  }
  return words;
}

interface CurlRequest {
  method: "GET" | "POST" | "PUT";
  url: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

/**
 * The request curl would send for `command` (curl(1): -H adds a header,
 * --data-binary sends the bytes as given, `@file` a file's, and makes it a
 * POST; -i only shows the answer's headers). Any other option fails the test:
 * this reader would not know what curl does with it.
 */
function curlRequest(command: string, cwd: string): CurlRequest {
  const [program, ...args] = shellWords(command);
  if (program !== "curl") throw new Error(`not a curl: ${command}`);
  const headers: Record<string, string> = {};
  let url: string | undefined;
  let body: Buffer | undefined;
  let method: CurlRequest["method"] | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const value = () => {
      const next = args[++i];
      if (next === undefined) throw new Error(`${arg} without a value in: ${command}`);
      return next;
    };
    if (arg === "-i" || arg === "--include") continue;
    if (arg === "-H" || arg === "--header") {
      const header = value();
      const colon = header.indexOf(":");
      headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
    } else if (arg === "--data-binary") {
      const data = value();
      body = data.startsWith("@") ? readFileSync(join(cwd, data.slice(1))) : Buffer.from(data);
    } else if (arg === "-X" || arg === "--request") {
      method = value() as CurlRequest["method"];
    } else if (arg.startsWith("-")) {
      throw new Error(`the demo's curl has ${arg}, which this test does not read: ${command}`);
    } else if (url === undefined) {
      url = arg;
    } else {
      throw new Error(`two URLs in: ${command}`);
    }
  }
  if (url === undefined) throw new Error(`no URL in: ${command}`);
  return { method: method ?? (body === undefined ? "GET" : "POST"), url, headers, body };
}

async function send(curl: CurlRequest) {
  const response = await request(curl.url, { method: curl.method, headers: curl.headers, body: curl.body });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

/** Whether a TCP connection to host:port is refused (nothing listens there for that address). */
function refused(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED") resolve(true);
      else reject(error);
    });
  });
}

/** This machine's addresses other than 127.0.0.1 that a listener on every address would answer on. */
function otherLocalAddresses(): string[] {
  const own = Object.values(networkInterfaces())
    .flat()
    .flatMap((info) => (info !== undefined && info.family === "IPv4" && !info.internal ? [info.address] : []));
  // All of 127.0.0.0/8 is this machine on Linux: a listener on 0.0.0.0 answers 127.0.0.2, one on 127.0.0.1 does not.
  return process.platform === "linux" ? ["127.0.0.2", ...own] : own;
}

/** README's demo curl: the ```sh block that sends the example event. */
function readmeCurl(): string {
  const block = /```sh\n(curl -i [^`]*?)```/.exec(README)?.[1];
  if (block === undefined) throw new Error("README.md has no ```sh block with the demo's curl");
  return joinContinuations(
    block
      .trim()
      .split("\n")
      .map((line) => line.trim()),
  );
}

/** Sends the printed curl twice, as README says to: 201, then the same answer again as a 200 replay. */
async function runItTwice(demo: Demo) {
  const curl = curlRequest(demo.curl, repoRoot);
  const first = await send(curl);
  const second = await send(curl);
  expect([first.status, first.headers["idempotent-replayed"]], first.text).toEqual([201, "false"]);
  expect([second.status, second.headers["idempotent-replayed"]], second.text).toEqual([200, "true"]);
  // The same order: the first answer, byte for byte, and one order in the emulator's 1C.
  expect(second.text).toBe(first.text);
  const eventId = (JSON.parse(curl.body?.toString("utf8") ?? "{}") as { event_id: string }).event_id;
  expect(JSON.parse(first.text)).toMatchObject({
    event_id: eventId,
    status: "SUCCEEDED",
    order: { id: expect.any(String) },
  });
  const orders = await request(`${demo.emulatorUrl}/_emulator/orders`);
  const listed = (await orders.body.json()) as { orders: Array<{ key: string }> };
  expect(listed.orders.map((order) => order.key)).toEqual([eventId]);
  return curl;
}

describe("npm run demo", { timeout: 60_000 }, () => {
  it("prints a curl that answers 201, then 200 with Idempotent-Replayed: true, on 127.0.0.1 only", async () => {
    // Port 0: the system picks free ports, and the banner must show the real ones.
    const demo = await startDemo({ PORT: "0", ONEC_EMULATOR_PORT: "0" });
    const curl = await runItTwice(demo);

    const url = new URL(curl.url);
    expect(url.pathname).toBe("/integration/v1/orders/paid");
    expect(url.hostname).toBe("127.0.0.1");
    expect(url.origin).toBe(new URL(demo.gatewayUrl).origin);
    expect(new URL(demo.emulatorUrl).hostname).toBe("127.0.0.1");
    // HOST is 127.0.0.1 in the demo: the same port on any other address of the machine is refused.
    const port = Number(url.port);
    for (const host of otherLocalAddresses()) expect(await refused(host, port), `${host}:${port}`).toBe(true);
  });

  it("honours PORT and ONEC_EMULATOR_PORT, as the configuration table says PORT does", async () => {
    const [gatewayPort, emulatorPort] = await freePorts(2);
    const demo = await startDemo({ PORT: String(gatewayPort), ONEC_EMULATOR_PORT: String(emulatorPort) });
    expect([demo.gatewayUrl, demo.emulatorUrl]).toEqual([
      `http://127.0.0.1:${gatewayPort}`,
      `http://127.0.0.1:${emulatorPort}`,
    ]);
    await runItTwice(demo);
  });

  it("by default listens on :8080 with the emulator on :8081, and prints README's curl", async (context) => {
    if (!((await portFree(8080)) && (await portFree(8081)))) {
      context.skip("8080 or 8081 is taken on this machine: the demo's default ports cannot be tried here");
    }
    const demo = await startDemo({});
    expect([demo.gatewayUrl, demo.emulatorUrl]).toEqual(["http://127.0.0.1:8080", "http://127.0.0.1:8081"]);
    expect(shellWords(demo.curl)).toEqual(shellWords(readmeCurl()));
    await runItTwice(demo);
  });
});

describe("npm run demo, run again and by support", { timeout: 60_000 }, () => {
  it("keeps 1C's orders beside the register: restarted, it answers the repeat with the order 1C still holds", async () => {
    const database = join(demoDir(), "gateway.db");
    const first = await startDemo({ PORT: "0", ONEC_EMULATOR_PORT: "0", DATABASE_URL: database });
    const curl = curlRequest(first.curl, repoRoot);
    const original = await send(curl);
    expect(original.status, original.text).toBe(201);
    await stop(first.child);

    const again = await startDemo({ PORT: "0", ONEC_EMULATOR_PORT: "0", DATABASE_URL: database });
    const repeat = await send(curlRequest(again.curl, repoRoot));
    expect([repeat.status, repeat.headers["idempotent-replayed"]]).toEqual([200, "true"]);
    expect(repeat.text).toBe(original.text);
    const order = (JSON.parse(original.text) as { order: { id: string } }).order;
    const listed = (await (await request(`${again.emulatorUrl}/_emulator/orders`)).body.json()) as {
      orders: Array<{ key: string; order: { id: string } }>;
    };
    expect(listed.orders).toMatchObject([{ key: "evt_2026-11-29_shop-a_100234", order: { id: order.id } }]);
  });

  it("opens the console and the admin API with an admin token made for the run and printed in the banner", async () => {
    const demo = await startDemo({ PORT: "0", ONEC_EMULATOR_PORT: "0" });
    const line = demo.output.find((text) => text.trim().startsWith("console"));
    const token = /admin token for this run: (\S+)\)/.exec(line ?? "")?.[1];
    expect(line, demo.output.join("\n")).toContain(`${demo.gatewayUrl}/console`);
    expect(token?.length).toBeGreaterThanOrEqual(32);
    const events = `${demo.gatewayUrl}/integration/v1/admin/events`;
    expect((await request(events)).statusCode).toBe(401);
    expect((await request(events, { headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200);
    const consolePage = await request(`${demo.gatewayUrl}/console`);
    expect(consolePage.statusCode).toBe(303);
    expect(String(consolePage.headers.location)).toMatch(/^\/console\/sign-in\b/);
    const signIn = await request(new URL(String(consolePage.headers.location), demo.gatewayUrl));
    expect(signIn.statusCode).toBe(200);
  });

  it("takes ADMIN_TOKEN_FILE as the admin token, and makes a register's folder that does not exist yet", async () => {
    const dir = demoDir();
    const tokenFile = join(dir, "admin-token");
    const token = "file-admin-token-0123456789abcdef";
    writeFileSync(tokenFile, `${token}\n`);
    const database = join(dir, "not", "yet", "gateway.db");
    const demo = await startDemo({
      PORT: "0",
      ONEC_EMULATOR_PORT: "0",
      DATABASE_URL: database,
      ADMIN_TOKEN_FILE: tokenFile,
    });
    expect(demo.output.join("\n")).not.toContain("admin token for this run");
    const events = `${demo.gatewayUrl}/integration/v1/admin/events`;
    expect((await request(events, { headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200);
    await runItTwice(demo);
    // 1C's orders are kept beside the register, in the folder the demo made.
    expect(readFileSync(join(dir, "not", "yet", "demo-1c-orders.jsonl"), "utf8")).toContain(
      "evt_2026-11-29_shop-a_100234",
    );
  });

  it("says which port is taken and which setting moves it, and exits 1", async () => {
    const taken = createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    const port = (taken.address() as { port: number }).port;
    try {
      for (const [setting, other] of [
        ["PORT", "ONEC_EMULATOR_PORT"],
        ["ONEC_EMULATOR_PORT", "PORT"],
      ] as const) {
        const child = spawnDemo({ [setting]: String(port), [other]: "0" });
        const stderr: string[] = [];
        createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (text) => stderr.push(text));
        const [code] = (await once(child, "exit")) as [number | null];
        expect(code, stderr.join("\n")).toBe(1);
        expect(stderr.join("\n")).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use; set ${setting}`);
      }
    } finally {
      taken.close();
    }
  });
});

async function stop(child: ChildProcess): Promise<void> {
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}

/** Whether nothing listens on 127.0.0.1:port now. */
async function portFree(port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, "127.0.0.1");
    await once(server, "listening");
  } catch {
    return false;
  }
  server.close();
  await once(server, "close");
  return true;
}

/** `count` distinct ports free now: the system's choice for port 0, released again. */
async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer().listen(0, "127.0.0.1"));
  await Promise.all(servers.map((server) => once(server, "listening")));
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
