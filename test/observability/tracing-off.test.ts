import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OnecEmulator, type PostReceived, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { orderPaidEvent } from "../support/events.ts";
import { postEvent } from "../support/http.ts";
import { startArgs } from "../support/start-script.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Tracing off costs nothing: the production server (dist/main.js, as `npm
 * start` runs it) serves a traced request and delivers it without loading a
 * single OpenTelemetry module. Every module Node resolves is recorded by a
 * resolve hook loaded first; the same server with OTEL_TRACES_EXPORTER set
 * shows that the hook sees them when they are loaded.
 */
const repoRoot = new URL("../../", import.meta.url).pathname;
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

const RECORDER = `
import { registerHooks } from "node:module";
import { writeFileSync } from "node:fs";
const loaded = new Set();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (resolved.url.includes("/@opentelemetry/")) loaded.add(resolved.url);
    return resolved;
  },
});
process.on("exit", () => writeFileSync(process.env.MODULES_REPORT, JSON.stringify([...loaded])));
`;

let onec: OnecEmulator;
const dir = tempDir();
const recorder = join(dir.path, "record-modules.mjs");
beforeAll(async () => {
  writeFileSync(recorder, RECORDER);
  onec = await startOnecEmulator();
});
afterAll(async () => {
  await onec.close();
  dir.remove();
});

/**
 * Runs the server until one traced event reaches 1C, stops it, and returns the OpenTelemetry modules it
 * loaded from node_modules, and what it wrote to stdout.
 */
async function runTraced(env: Record<string, string>, name: string): Promise<{ loaded: string[]; stdout: string[] }> {
  const stdout: string[] = [];
  const report = join(dir.path, `${name}.json`);
  const child = spawn(process.execPath, ["--import", pathToFileURL(recorder).href, ...startArgs()], {
    cwd: repoRoot,
    env: {
      ...withoutOtel(process.env),
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
      ALLOW_ANONYMOUS: "true",
      DATABASE_URL: join(dir.path, `${name}.db`),
      ONEC_URL: onec.url,
      SYNC_WAIT_MS: "3000",
      MODULES_REPORT: report,
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
        stdout.push(line);
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (match?.[1] !== undefined) resolve(match[1]);
      });
      child.once("exit", (code) => reject(new Error(`gateway exited with ${code}`)));
    });
    const event = orderPaidEvent();
    const posted = new Promise<PostReceived>((resolve) =>
      onec.events.on("post", (post: PostReceived) => {
        if (post.key === event.event_id) resolve(post);
      }),
    );
    expect((await postEvent(url, event, { traceparent: TRACEPARENT })).status).toBe(201);
    // The attempt path ran too: 1C got the shop's context either way.
    expect((await posted).traceparent?.slice(3, 35)).toBe(TRACEPARENT.slice(3, 35));
  } finally {
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  }
  return { loaded: JSON.parse(readFileSync(report, "utf8")) as string[], stdout };
}

function withoutOtel(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("OTEL_")));
}

describe("tracing off", () => {
  it("loads no OpenTelemetry module, though the request carried a traceparent", async () => {
    expect((await runTraced({}, "off")).loaded).toEqual([]);
  }, 30_000);

  it("is told from on by the same recorder: with OTEL_TRACES_EXPORTER=console the SDK is loaded and exports the trace", async () => {
    const { loaded, stdout } = await runTraced({ OTEL_TRACES_EXPORTER: "console" }, "on");
    expect(loaded.some((url) => url.includes("/@opentelemetry/sdk-trace/"))).toBe(true);
    // The console exporter prints each span as an object: the shop's trace id is on them.
    expect(stdout.filter((line) => line.includes(`traceId: '${TRACEPARENT.slice(3, 35)}'`)).length).toBeGreaterThan(0);
  }, 30_000);
});
