import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import type { OnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { type Exposition, parseExposition, sampleValue } from "../observability/exposition.ts";
import { call } from "../support/http.ts";
import { gatewayBin } from "../support/start-script.ts";
import { tempDir } from "../support/temp.ts";
import { cliEnv, repoRoot, TestDatabase } from "./cli-support.ts";

// Issue 22, item 6: "Workers expose /metrics (their own port, or a push to the main instance: choose and say why)."
const METRICS_TOKEN = "worker-metrics-token-Hq4nB7";

interface RunningWorker {
  child: ChildProcess;
  /** The URL of its /metrics, from its "metrics listening" log line. */
  metricsUrl: string;
  output: string[];
}

/** `gateway worker` as a child process, once it has said where its /metrics listens. */
async function startWorker(env: Record<string, string>): Promise<RunningWorker> {
  const child = spawn(process.execPath, [gatewayBin(), "worker"], {
    cwd: repoRoot,
    env: cliEnv({ DELIVERY_POLL_MS: "50", LOG_LEVEL: "info", ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => output.push(line));
  const metricsUrl = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      output.push(line);
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === "metrics listening" && entry.url !== undefined) resolve(entry.url);
    });
    child.once("exit", (code) => reject(new Error(`worker exited with ${code}:\n${output.join("\n")}`)));
  });
  return { child, metricsUrl, output };
}

async function scrape(worker: RunningWorker): Promise<Exposition> {
  const answer = await call(worker.metricsUrl, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(answer.status, answer.text).toBe(200);
  return parseExposition(answer.text);
}

describe("gateway worker's /metrics", { timeout: 60_000 }, () => {
  let db: TestDatabase;
  let onec: OnecEmulator;
  let worker: RunningWorker | undefined;
  const secrets = tempDir("gateway-worker-secrets-");

  beforeEach(async () => {
    db = new TestDatabase();
    onec = await startOnecEmulator();
  });
  afterEach(async () => {
    if (worker !== undefined && worker.child.exitCode === null) {
      const exited = once(worker.child, "exit");
      worker.child.kill("SIGTERM");
      await exited;
    }
    await onec.close();
    await db.remove();
  });
  afterAll(() => secrets.remove());

  it("serves its delivery metrics on its own port, and they move when it delivers an event to 1C", async () => {
    const tokenFile = join(secrets.path, "metrics-token");
    writeFileSync(tokenFile, `${METRICS_TOKEN}\n`, { mode: 0o600 });
    await db.close();
    worker = await startWorker({
      ...db.env,
      ONEC_URL: onec.url,
      METRICS_PORT: "0",
      METRICS_TOKEN_FILE: tokenFile,
    });
    expect(new URL(worker.metricsUrl)).toMatchObject({ hostname: "127.0.0.1", pathname: "/metrics" });

    // Prometheus's token is required, as on the server.
    const refused = await call(worker.metricsUrl);
    expect(refused.status).toBe(401);
    expect(refused.headers["www-authenticate"]).toBe('Bearer realm="metrics"');

    const before = await scrape(worker);
    expect(before.types.get("gateway_delivery_attempts_total")).toBe("counter");
    expect(sampleValue(before, "gateway_delivery_attempts_total", { outcome: "delivered" })).toBe(0);
    expect(sampleValue(before, "gateway_breaker_state", {})).toBe(0);
    expect(sampleValue(before, "gateway_pending_events", {})).toBe(0);

    const committed = once(onec.events, "committed");
    const eventId = await db.pending();
    await committed;
    await expect.poll(async () => (await db.find(eventId))?.status).toBe(EventStatus.SUCCEEDED);

    const after = await scrape(worker);
    expect(sampleValue(after, "gateway_delivery_attempts_total", { outcome: "delivered" })).toBe(1);
    expect(sampleValue(after, "gateway_onec_request_duration_seconds_count", { outcome: "delivered" })).toBe(1);
    expect(sampleValue(after, "gateway_pending_events", {})).toBe(0);
    expect(sampleValue(after, "gateway_breaker_state", {})).toBe(0);
    expect(after.samples.some((s) => s.name === "gateway_process_process_resident_memory_bytes")).toBe(true);
  });

  it("counts a FAILED_FINAL by its reason, and shows the register's FAILED_FINAL backlog", async () => {
    await db.close();
    onec.setFaults({ orderNotValid: "Не заполнен склад" });
    worker = await startWorker({
      ...db.env,
      ONEC_URL: onec.url,
      METRICS_PORT: "0",
      METRICS_TOKEN: METRICS_TOKEN,
    });
    const eventId = await db.pending();
    await expect.poll(async () => (await db.find(eventId))?.status, { timeout: 20_000 }).toBe(EventStatus.FAILED_FINAL);
    const after = await scrape(worker);
    expect(sampleValue(after, "gateway_delivery_attempts_total", { outcome: "rejected" })).toBe(1);
    expect(sampleValue(after, "gateway_events_failed_final_total", { reason: "onec_rejected" })).toBe(1);
    expect(sampleValue(after, "gateway_failed_final_events", {})).toBe(1);
  });

  it("refuses a metrics listener beyond loopback without METRICS_TOKEN, before delivering anything", () => {
    return new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [gatewayBin(), "worker"], {
        cwd: repoRoot,
        env: cliEnv({ ...db.env, ONEC_URL: onec.url, METRICS_PORT: "0", METRICS_HOST: "0.0.0.0" }),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.once("exit", (code) => {
        try {
          expect(code).toBe(1);
          expect(stderr).toMatch(/^configuration error: METRICS_HOST=0\.0\.0\.0 serves \/metrics beyond this machine/);
          resolve();
        } catch (error) {
          reject(error);
        }
      });
    });
  });
});
