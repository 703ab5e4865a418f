import postgres from "postgres";

/**
 * The database side of a profile (BENCH_PROFILE=1): what the server's
 * backends for one database are doing, sampled from pg_stat_activity every
 * few milliseconds while the load runs. A gateway's CPU profile cannot show
 * time spent waiting for PostgreSQL; this shows what that wait is made of
 * (a lock, the WAL flush of a commit, CPU in the server).
 */

const SAMPLE_EVERY_MS = 10;

export interface WaitSampler {
  /** Stops sampling; resolves with one line: active backends on average, and what they waited on. */
  stop(): Promise<string>;
}

/** `server`: any URL on the server; `database`: the name whose backends are sampled. */
export function sampleWaits(server: string, database: string): WaitSampler {
  const sql = postgres(server, { max: 1, connect_timeout: 3, onnotice: () => {} });
  const counts = new Map<string, number>();
  let samples = 0;
  let active = 0;
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      // Active backends only: an idle one is the driver's time, not the server's.
      const rows = await sql<{ what: string }[]>`
        SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS what FROM pg_stat_activity
         WHERE datname = ${database} AND state = 'active' AND pid <> pg_backend_pid()`;
      samples += 1;
      active += rows.length;
      for (const { what } of rows) counts.set(what, (counts.get(what) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await sampling.finally(() => sql.end({ timeout: 1 }));
      const waits = [...counts]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([what, count]) => `${what} ${((count * 100) / Math.max(1, active)).toFixed(0)}%`);
      const average = samples > 0 ? (active / samples).toFixed(1) : "n/a";
      return `${samples} samples, ${average} active backends on average: ${waits.join(", ") || "none active"}`;
    },
  };
}
