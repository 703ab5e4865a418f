/**
 * `npm run bench:startup`: time from spawn to the first 200 of /readyz, and the process's RSS one
 * second after that, median of 5 runs each, alternating: the production start (`npm start`'s node
 * line on dist/) against the sources through tsx (what production ran before the build), on the
 * Node that runs this script. SQLite in a fresh temporary file, 1C unreachable (readiness does not
 * wait for it), logging at warn. The start-up figures in docs/performance.md come from here.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startArgs, startNodeFlags } from "../support/start-script.ts";

const RUNS = Number(process.env.STARTUP_RUNS ?? 5);

interface Variant {
  name: string;
  args: string[];
}

const variants: Variant[] = [
  { name: "node dist/main.js (npm start)", args: startArgs() },
  { name: "node --import tsx src/main.ts (before)", args: [...startNodeFlags(), "--import", "tsx", "src/main.ts"] },
];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

/** Resident set of the process (worker threads included: they share it), in MB. */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((row) => row.startsWith("VmRSS:"));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

async function once(variant: Variant): Promise<{ readyMs: number; rssMb: number }> {
  const dir = mkdtempSync(join(tmpdir(), "startup-"));
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, variant.args, {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: join(dir, "gateway.db"),
      ONEC_URL: "http://127.0.0.1:9/unreachable",
      ALLOW_ANONYMOUS: "true",
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${variant.name} exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ok) break;
      if (performance.now() - started > 30_000) throw new Error(`${variant.name} not ready in 30 s`);
      await sleep(10);
    }
    const readyMs = performance.now() - started;
    await sleep(1000);
    return { readyMs, rssMb: rssMb(child.pid ?? 0) };
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const results = new Map(variants.map((variant) => [variant.name, { ready: [] as number[], rss: [] as number[] }]));
for (let run = 0; run < RUNS; run += 1) {
  for (const variant of variants) {
    const { readyMs, rssMb: rss } = await once(variant);
    const entry = results.get(variant.name);
    entry?.ready.push(readyMs);
    entry?.rss.push(rss);
  }
}
console.log(`Node ${process.version}, ${RUNS} runs each, median (min–max)`);
for (const [name, { ready, rss }] of results) {
  const span = (values: number[], digits: number) =>
    `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
  console.log(`${name.padEnd(42)} start to /readyz ${span(ready, 0)} ms   RSS 1 s later ${span(rss, 0)} MB`);
}
