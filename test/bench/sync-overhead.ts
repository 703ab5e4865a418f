import { Agent, request } from "undici";
import { measuredLoad } from "./cpu-profile.ts";
import { goalNote } from "./goals.ts";
import { BENCH_SENDER_TOKEN, orderPaidBodies, ROUTE } from "./load.ts";
import { type CanonicalEvent, canonicalEvents, postToOnec } from "./onec-posts.ts";

/**
 * The sync scenario: what a sender waits for beyond 1C itself when the
 * gateway answers only after delivering (SYNC_WAIT_MS > 0, answer 201). One
 * connection, one request at a time, each timed alone: a new event through
 * the gateway, and a direct POST of the same kind of body to the same 1C
 * emulator (what the gateway's OnecClient sends, onec-posts.ts). The
 * difference of their percentiles is the gateway's cost in a sync answer:
 * parsing and validating, the durable reserve, the deliverer's claim, the
 * settle, and the wake-up of the waiting request.
 */

/** The two kinds alternate in blocks this long, so a busy spell on a shared machine hits both alike. */
const BLOCK = 250;
const PERCENTILES = [50, 90, 99] as const;

export interface SyncSettings {
  /** Timed requests of each kind. */
  readonly requests: number;
  /** Untimed requests of each kind first: the JIT, the register's caches and both sockets settle. */
  readonly warmup: number;
  /** The most the p50 difference may be, in ms. */
  readonly goalP50Ms: number;
}

export interface SyncOutcome {
  /** False when any answer was not 201: a 202 means the sync wait ran out, and the figures mean nothing. */
  readonly ok: boolean;
  readonly p50OverheadMs: number | undefined;
}

interface Side {
  readonly label: string;
  /** Sends the next request and resolves with its status. */
  readonly post: () => Promise<number>;
  readonly ms: number[];
  readonly statuses: Map<number, number>;
}

export async function measureSyncOverhead(
  gatewayUrl: string,
  onecUrl: string,
  settings: SyncSettings,
): Promise<SyncOutcome> {
  const gatewayAgent = new Agent({ connections: 1 });
  const onecAgent = new Agent({ connections: 1 });
  try {
    const gateway = side("gateway, 201 after 1C", gatewayPosts(gatewayUrl, gatewayAgent));
    const direct = side("direct POST to 1C", directPosts(onecUrl, onecAgent, settings.warmup + settings.requests));
    await alternate([gateway, direct], settings.warmup);
    for (const each of [gateway, direct]) {
      each.ms.length = 0;
      each.statuses.clear();
    }
    await measuredLoad(() => alternate([gateway, direct], settings.requests));
    return report(gateway, direct, settings);
  } finally {
    await Promise.all([gatewayAgent.close(), onecAgent.close()]);
  }
}

function side(label: string, post: () => Promise<number>): Side {
  return { label, post, ms: [], statuses: new Map() };
}

/** A new event per request, as a shop sends it. */
function gatewayPosts(gatewayUrl: string, dispatcher: Agent): () => Promise<number> {
  const nextBody = orderPaidBodies(`sync-${Date.now().toString(36)}-${process.pid}`);
  const headers = { "content-type": "application/json", authorization: `Bearer ${BENCH_SENDER_TOKEN}` };
  return async () => {
    const response = await request(`${gatewayUrl}${ROUTE}`, { method: "POST", dispatcher, headers, body: nextBody() });
    await response.body.text();
    return response.statusCode;
  };
}

/** Canonical bodies made up front, so the timed part is the POST alone. */
function directPosts(onecUrl: string, dispatcher: Agent, count: number): () => Promise<number> {
  const events = canonicalEvents("sync-direct", count);
  let next = 0;
  return () => {
    const event = events[next++ % events.length] as CanonicalEvent;
    return postToOnec(onecUrl, dispatcher, event, `sync-${event.eventId}`);
  };
}

/** `count` timed requests of each side, one at a time, side after side in blocks of BLOCK. */
async function alternate(sides: readonly Side[], count: number): Promise<void> {
  for (let done = 0; done < count; done += BLOCK) {
    for (const each of sides) {
      for (let i = done; i < Math.min(done + BLOCK, count); i++) {
        const startedAt = performance.now();
        const status = await each.post();
        each.ms.push(performance.now() - startedAt);
        each.statuses.set(status, (each.statuses.get(status) ?? 0) + 1);
      }
    }
  }
}

function report(gateway: Side, direct: Side, settings: SyncSettings): SyncOutcome {
  const gatewayAt = percentiles(gateway.ms);
  const directAt = percentiles(direct.ms);
  // The maxima are single outliers: their difference says nothing, so the row stops at the last percentile.
  const overhead = PERCENTILES.map((_, i) => (gatewayAt[i] ?? Number.NaN) - (directAt[i] ?? Number.NaN));
  console.log("");
  console.log(
    `sync: one connection, one request at a time, ${settings.requests} timed of each kind ` +
      `(after ${settings.warmup} untimed), alternating in blocks of ${BLOCK}`,
  );
  printRows([
    ["", ...PERCENTILES.map((p) => `p${p} ms`), "max ms", "statuses"],
    [gateway.label, ...fixed(gatewayAt), statuses(gateway)],
    [direct.label, ...fixed(directAt), statuses(direct)],
    ["overhead (difference)", ...fixed(overhead)],
  ]);

  // Any answer but 201 (a 202: the sync wait ran out) makes the figures meaningless.
  const wrong = [gateway, direct].filter((each) => [...each.statuses.keys()].some((status) => status !== 201));
  for (const each of wrong) console.error(`FAIL sync, ${each.label}: answers other than 201: ${statuses(each)}`);
  const p50 = overhead[0];
  const p50OverheadMs = wrong.length === 0 && p50 !== undefined && !Number.isNaN(p50) ? p50 : undefined;
  const met = p50OverheadMs === undefined ? undefined : p50OverheadMs <= settings.goalP50Ms;
  const figure = p50OverheadMs === undefined ? "n/a" : p50OverheadMs.toFixed(2);
  console.log(`  overhead at p50: ${figure} ms, ${goalNote(`≤ ${settings.goalP50Ms} ms`, met)}`);
  return { ok: wrong.length === 0, p50OverheadMs };
}

/** The label left-aligned, the figures right-aligned, under the header. */
function printRows(rows: readonly (readonly string[])[]): void {
  const columns = Math.max(...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0)));
  for (const row of rows) {
    const cells = row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)));
    console.log(`  ${cells.join("  ")}`);
  }
}

/** PERCENTILES, then the maximum, nearest-rank. */
function percentiles(ms: readonly number[]): number[] {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
  return [...PERCENTILES.map(at), at(100)];
}

function fixed(values: readonly number[]): string[] {
  return values.map((value) => (Number.isNaN(value) ? "n/a" : value.toFixed(2)));
}

function statuses(each: Side): string {
  return [...each.statuses].map(([status, count]) => `${status}:${count}`).join(" ");
}
