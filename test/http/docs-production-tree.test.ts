import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startArgs } from "../support/start-script.ts";
import { tempDir } from "../support/temp.ts";

/**
 * The API reference page from the build alone, as the image runs it: a folder
 * holding only what the Dockerfile's runtime stage copies (package.json,
 * node_modules/, dist/, schemas/, 1c/contract/; no src/), and `npm start`'s
 * command line in it. dist/main.js is one esbuild bundle, so Swagger UI's files
 * cannot be looked for beside the plugin's module (that is the bundle now):
 * they must be found in node_modules/ and served, byte for byte.
 */

const repoRoot = new URL("../../", import.meta.url).pathname;
const UI_FILES = ["swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css"];

describe("GET /docs from a production tree (dist/ and node_modules/, no src/)", { timeout: 60_000 }, () => {
  const dir = tempDir("docs-production-tree-");
  let child: ChildProcess | undefined;
  let url = "";
  const output: string[] = [];

  beforeAll(async () => {
    const args = startArgs(); // refuses a dist/ older than src/
    for (const path of ["package.json", "dist", "schemas", "1c/contract"]) {
      cpSync(join(repoRoot, path), join(dir.path, path), { recursive: true });
    }
    symlinkSync(join(repoRoot, "node_modules"), join(dir.path, "node_modules"), "dir");
    child = spawn(process.execPath, args, {
      cwd: dir.path,
      env: {
        ...process.env,
        HOST: "127.0.0.1",
        PORT: "0",
        LOG_LEVEL: "info",
        ALLOW_ANONYMOUS: "true",
        DATABASE_URL: join(dir.path, "gateway.db"),
        ONEC_URL: "http://127.0.0.1:9/unreachable",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => output.push(line));
    const exited = once(child, "exit").then(([code]) => {
      throw new Error(`the gateway exited with ${code}:\n${output.join("\n")}`);
    });
    const listening = new Promise<string>((resolve) => {
      createInterface({ input: child?.stdout as NodeJS.ReadableStream }).on("line", (line) => {
        output.push(line);
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (match?.[1] !== undefined) resolve(match[1]);
      });
    });
    url = await Promise.race([listening, exited]);
  }, 60_000);

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
    dir.remove();
  });

  it("serves the page, every file it loads, and the document it reads", async () => {
    const page = await fetch(`${url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const loaded = [...html.matchAll(/\b(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1] ?? "");
    expect(loaded.length).toBeGreaterThanOrEqual(5);
    for (const path of loaded) expect((await fetch(`${url}${path}`)).status, path).toBe(200);
    expect((await fetch(`${url}/openapi.json`)).status).toBe(200);
  });

  it("serves Swagger UI's files as the installed package holds them", async () => {
    for (const file of UI_FILES) {
      const answer = await fetch(`${url}/docs/static/${file}`);
      expect(answer.status, file).toBe(200);
      const served = Buffer.from(await answer.arrayBuffer());
      const installed = readFileSync(join(dir.path, "node_modules/@fastify/swagger-ui/static", file));
      expect(served.equals(installed), file).toBe(true);
    }
  });
});
