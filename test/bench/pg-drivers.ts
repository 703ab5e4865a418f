/**
 * Which PostgreSQL driver the register uses, on measured grounds:
 *   node --import tsx test/bench/pg-drivers.ts [postgres://postgres@127.0.0.1:5432/postgres]
 * For each of pg (node-postgres) and postgres (porsager): the round trip of a
 * trivial query, 200 queries issued at once on one connection (pipelining),
 * 50 concurrent callers on a pool of 10 (latency spread, errors), and a
 * NOTIFY → LISTEN wake-up. Same server, same run, alternating drivers.
 */
import { performance } from "node:perf_hooks";
import pg from "pg";
import postgres from "postgres";

const url = process.argv[2] ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

interface Driver {
  name: string;
  /** One connection. */
  single(): Promise<{ query(text: string, params: unknown[]): Promise<unknown>; end(): Promise<void> }>;
  /** A pool of `max` connections. */
  pool(max: number): { query(text: string, params: unknown[]): Promise<unknown>; end(): Promise<void> };
  /** Resolves with the wake-up latency of one NOTIFY sent on another connection. */
  listen(channel: string): Promise<{ next(): Promise<number>; end(): Promise<void> }>;
}

const nodePostgres: Driver = {
  name: "pg",
  async single() {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return { query: (text, params) => client.query(text, params), end: () => client.end() };
  },
  pool(max) {
    const pool = new pg.Pool({ connectionString: url, max });
    return { query: (text, params) => pool.query(text, params), end: () => pool.end() };
  },
  async listen(channel) {
    const listener = new pg.Client({ connectionString: url });
    const sender = new pg.Client({ connectionString: url });
    await Promise.all([listener.connect(), sender.connect()]);
    await listener.query(`LISTEN "${channel}"`);
    let wake: (() => void) | undefined;
    listener.on("notification", () => wake?.());
    return {
      async next() {
        const woken = new Promise<void>((resolve) => {
          wake = resolve;
        });
        const started = performance.now();
        await sender.query("SELECT pg_notify($1, 'x')", [channel]);
        await woken;
        return performance.now() - started;
      },
      end: async () => {
        await Promise.all([listener.end(), sender.end()]);
      },
    };
  },
};

const porsager: Driver = {
  name: "postgres",
  async single() {
    const sql = postgres(url, { max: 1 });
    return {
      query: (text, params) => sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true }),
      end: () => sql.end(),
    };
  },
  pool(max) {
    const sql = postgres(url, { max });
    return {
      query: (text, params) => sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true }),
      end: () => sql.end(),
    };
  },
  async listen(channel) {
    const sql = postgres(url, { max: 2 });
    let wake: (() => void) | undefined;
    await sql.listen(channel, () => wake?.());
    return {
      async next() {
        const woken = new Promise<void>((resolve) => {
          wake = resolve;
        });
        const started = performance.now();
        await sql.notify(channel, "x");
        await woken;
        return performance.now() - started;
      },
      end: () => sql.end(),
    };
  },
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(3)} ms, p99 ${percentile(sorted, 99).toFixed(3)} ms`;
}

const QUERY = "SELECT $1::int + 1 AS n";

async function roundTrip(driver: Driver): Promise<string> {
  const conn = await driver.single();
  for (let i = 0; i < 200; i++) await conn.query(QUERY, [i]); // warm-up, prepares the statement
  const samples: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const started = performance.now();
    await conn.query(QUERY, [i]);
    samples.push(performance.now() - started);
  }
  await conn.end();
  return summary(samples);
}

async function pipelined(driver: Driver): Promise<string> {
  const conn = await driver.single();
  await conn.query(QUERY, [0]);
  const rounds = 20;
  const started = performance.now();
  for (let r = 0; r < rounds; r++) await Promise.all(Array.from({ length: 200 }, (_, i) => conn.query(QUERY, [i])));
  const ms = (performance.now() - started) / rounds;
  await conn.end();
  return `${ms.toFixed(2)} ms per 200 queries at once (${Math.round((200 / ms) * 1000)} queries/s)`;
}

async function pooled(driver: Driver): Promise<string> {
  const pool = driver.pool(10);
  await Promise.all(Array.from({ length: 10 }, () => pool.query(QUERY, [0])));
  const samples: number[] = [];
  let errors = 0;
  const started = performance.now();
  // 50 callers, each 100 queries back to back, sharing 10 connections.
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      for (let i = 0; i < 100; i++) {
        const t = performance.now();
        try {
          await pool.query(QUERY, [i]);
        } catch {
          errors += 1;
        }
        samples.push(performance.now() - t);
      }
    }),
  );
  const total = performance.now() - started;
  await pool.end();
  return `${summary(samples)}, ${Math.round((5000 / total) * 1000)} queries/s, ${errors} errors`;
}

async function wakeUp(driver: Driver): Promise<string> {
  const channel = "bench_wake";
  const listener = await driver.listen(channel);
  for (let i = 0; i < 20; i++) await listener.next();
  const samples: number[] = [];
  for (let i = 0; i < 300; i++) samples.push(await listener.next());
  await listener.end();
  return summary(samples);
}

const measures: [string, (d: Driver) => Promise<string>][] = [
  ["round trip (1 connection, sequential)", roundTrip],
  ["pipelined (1 connection, 200 at once)", pipelined],
  ["pool of 10, 50 concurrent callers", pooled],
  ["NOTIFY → LISTEN wake-up", wakeUp],
];

for (const [label, measure] of measures) {
  for (const driver of [nodePostgres, porsager]) {
    console.log(`${label.padEnd(40)} ${driver.name.padEnd(9)} ${await measure(driver)}`);
  }
}
