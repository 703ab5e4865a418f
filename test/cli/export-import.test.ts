import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/cli.ts";
import type { CliContext } from "../../src/cli/context.ts";
import { onecIdempotencyKey } from "../../src/delivery/attempt-delivery.ts";
import { ALL_STATUSES, EventStatus } from "../../src/domain/event-status.ts";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import type { EventRecord, EventRegister, PageCursor } from "../../src/register/port.ts";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway } from "../support/gateway.ts";
import { type HttpAnswer, postEvent } from "../support/http.ts";
import { ordersFor, ordersOf } from "../support/orders.ts";
import { postgresForTests } from "../support/postgres.ts";
import { siteOrderOf } from "../support/records.ts";
import { gatewayBin } from "../support/start-script.ts";
import { tempDir } from "../support/temp.ts";
import { cliEnv, gateway, repoRoot } from "./cli-support.ts";

/**
 * Issue: moving the register from SQLite to PostgreSQL. A SQLite register with
 * events in every status, their attempts and replays, made by a real gateway
 * and the register port; `gateway export`, then `gateway import` into a fresh
 * PostgreSQL database (through a real pipe between two processes) and into a
 * fresh SQLite file. Each target must hold the same events, attempts and
 * replays as the source (leases aside), answer a resend with the first answer,
 * and deliver what was pending.
 */

const TOKENS = { "shop-a": "shop-a-token-0123456789", "shop-b": "shop-b-token-0123456789" };
type Sender = keyof typeof TOKENS;
const SENDER_TOKENS = Object.entries(TOKENS)
  .map(([id, token]) => `${id}:${token}`)
  .join(",");

function send(url: string, sender: Sender, body: unknown): Promise<HttpAnswer> {
  return postEvent(url, body, { authorization: `Bearer ${TOKENS[sender]}` });
}

interface Key {
  sender: Sender;
  eventId: string;
}

/** What the source holds, by role, and the first answer a resend must get back. */
interface Source {
  succeeded: Key & { body: unknown; firstAnswer: string };
  /** Pending, waiting for its next attempt after 1C answered 503. */
  retrying: Key;
  /** Pending, mid-attempt when the old processes stopped: its lease runs for 10 more minutes. */
  leased: Key;
  every: Key[];
}

const dir = tempDir("gateway-export-");
const sourceFile = join(dir.path, "source.db");
const exportFile = join(dir.path, "export.ndjson");
let source: Source;

beforeAll(async () => {
  source = await fillSource();
}, 60_000);
afterAll(() => dir.remove());

/** Resolves with the event once an attempt's outcome (or what it already holds) satisfies `done`. */
function settledUntil(register: EventRegister, key: Key, done: (record: EventRecord) => boolean): Promise<EventRecord> {
  return new Promise((resolve, reject) => {
    const check = async () => {
      const record = await register.find(key.sender, key.eventId);
      if (record !== undefined && done(record)) {
        unwatch();
        resolve(record);
      }
    };
    const unwatch = register.watch((change) => {
      // A read that fails (the register closing under a late notice) fails the wait, never unhandled.
      if (change.kind === "settled" && change.eventId === key.eventId) check().catch(reject);
    });
    check().catch(reject);
  });
}

/** The outcome of the attempt after the first: a replay's. */
// By the attempts claimed, not the fencing token: a replay moves the token on too.
const secondAttemptDone = (record: EventRecord) => record.attempts > 1 && record.leaseOwner === null;
const succeeded = (record: EventRecord) => record.status === EventStatus.SUCCEEDED;

async function fillSource(): Promise<Source> {
  const onec = await startOnecEmulator();
  const gw = await startTestGateway({ ONEC_URL: onec.url, DATABASE_URL: sourceFile, SENDER_TOKENS });
  const register = gw.gateway.register;
  try {
    const body = orderPaidEvent();
    const delivered = { sender: "shop-a" as const, eventId: body.event_id };
    const first = await send(gw.url, "shop-a", body);
    expect(first.status).toBe(201);
    // Another sender's event under the same event_id: a separate event, a separate order.
    expect((await send(gw.url, "shop-b", body)).status).toBe(201);

    // 1C refuses it; support replays it (not forced), 1C refuses again.
    onec.setFaults({ knownSkus: [] });
    const refusedBody = orderPaidEvent();
    const refused = { sender: "shop-a" as const, eventId: refusedBody.event_id };
    expect((await send(gw.url, "shop-a", refusedBody)).status).toBe(422);
    const refusedAgain = settledUntil(register, refused, secondAttemptDone);
    await register.replay({ ...refused, requestedBy: "anna", reason: "SKU added", force: false, now: Date.now() });
    expect((await refusedAgain).status).toBe(EventStatus.FAILED_FINAL);

    // Delivered, then sent again on purpose (forced replay).
    onec.setFaults({ knownSkus: null });
    const forcedBody = orderPaidEvent();
    const forced = { sender: "shop-b" as const, eventId: forcedBody.event_id };
    expect((await send(gw.url, "shop-b", forcedBody)).status).toBe(201);
    const forcedAgain = settledUntil(register, forced, secondAttemptDone);
    await register.replay({ ...forced, requestedBy: "boris", reason: "check 1C", force: true, now: Date.now() });
    expect((await forcedAgain).status).toBe(EventStatus.SUCCEEDED);

    // 1C down: accepted, one attempt failed, waiting for the next.
    onec.setFaults({ unavailable: true, retryAfterSeconds: 1 });
    const retryingBody = orderPaidEvent();
    const retrying = { sender: "shop-a" as const, eventId: retryingBody.event_id };
    const waiting = await send(gw.url, "shop-a", retryingBody);
    expect([waiting.status, waiting.json().status]).toEqual([202, EventStatus.FAILED_RETRYABLE]);
    await gw.close();

    const port = new SqliteRegister(sourceFile);
    try {
      const leased = { sender: "shop-b" as const, eventId: orderPaidEvent().event_id };
      await reserve(port, leased);
      await port.claim({ owner: "old-worker", now: Date.now(), leaseMs: 600_000, limit: 1, only: leased });
      const fencedOut = { sender: "shop-a" as const, eventId: orderPaidEvent().event_id };
      await failWithAFencedOutAttempt(port, fencedOut);
      return {
        succeeded: { ...delivered, body, firstAnswer: first.text },
        retrying,
        leased,
        every: [delivered, { ...delivered, sender: "shop-b" }, refused, forced, retrying, leased, fencedOut],
      };
    } finally {
      await port.close();
    }
  } finally {
    await gw.close();
    await onec.close();
  }
}

async function reserve(register: EventRegister, key: Key, now = Date.now()): Promise<void> {
  const event = orderPaidEvent((e) => {
    e.event_id = key.eventId;
  });
  await register.reserve({
    ...key,
    fingerprint: `fp-${key.eventId}`,
    policyVersion: "test",
    body: JSON.stringify(event),
    ...siteOrderOf(JSON.stringify(event)),
    correlationId: `c-${key.eventId}`,
    now,
  });
}

/** A stalled worker's lease is taken over; its late outcome is kept in the history only (applied: false). */
async function failWithAFencedOutAttempt(register: EventRegister, key: Key): Promise<void> {
  const t = Date.now() - 60_000;
  await reserve(register, key, t);
  const [stale] = await register.claim({ owner: "stalled", now: t, leaseMs: 1000, limit: 1, only: key });
  const [fresh] = await register.claim({ owner: "other", now: t + 2000, leaseMs: 1000, limit: 1, only: key });
  if (stale === undefined || fresh === undefined) throw new Error("the fixture could not claim");
  const refusal = { status: 422, body: '{"type":"onec-rejected"}' };
  const report = { startedAt: t, durationMs: 3, outcome: "rejected", httpStatus: 422, errorClass: "onec_rejected" };
  const final = { status: EventStatus.FAILED_FINAL, error: "unknown SKU", errorClass: "onec_rejected" } as const;
  expect(await register.settle(stale.lease, { ...final, response: refusal }, report, t + 2500)).toBeUndefined();
  expect(await register.settle(fresh.lease, { ...final, response: refusal }, report, t + 2600)).toBeDefined();
}

/** Every event of a register, through the port's keyset pages. */
async function everyEvent(register: EventRegister): Promise<EventRecord[]> {
  const all: EventRecord[] = [];
  let before: PageCursor | undefined;
  for (;;) {
    const page = await register.page({ limit: 3, ...(before === undefined ? {} : { before }) });
    all.push(...page);
    const last = page.at(-1);
    if (last === undefined) return all;
    before = { receivedAt: last.receivedAt, sender: last.sender, eventId: last.eventId };
  }
}

/** The source, then the target, as the port shows them: every event with its attempts and replays. */
async function contents(register: EventRegister) {
  const events = await everyEvent(register);
  return Promise.all(
    events.map(async (record) => ({
      record,
      attempts: await register.listAttempts(record.sender, record.eventId),
      replays: await register.listReplays(record.sender, record.eventId),
    })),
  );
}

async function sourceContents() {
  const port = new SqliteRegister(sourceFile);
  try {
    return await contents(port);
  } finally {
    await port.close();
  }
}

/** `gateway export | gateway import`, two real processes joined by a pipe. */
async function exportPipedIntoImport(fromEnv: Record<string, string>, toEnv: Record<string, string>) {
  const run = (args: string[], env: Record<string, string>) =>
    spawn(process.execPath, [gatewayBin(), ...args], { cwd: repoRoot, env: cliEnv(env) });
  const exporter = run(["export"], fromEnv);
  // The leased event's lease runs on: the source's processes are stopped, so it is imported all the same.
  const importer = run(["import", "--ignore-leases"], toEnv);
  exporter.stdout.pipe(importer.stdin);
  const text = (stream: NodeJS.ReadableStream) => {
    let all = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      all += chunk;
    });
    return () => all;
  };
  const exportErr = text(exporter.stderr);
  const importOut = text(importer.stdout);
  const importErr = text(importer.stderr);
  const [[exportStatus], [importStatus]] = await Promise.all([once(exporter, "close"), once(importer, "close")]);
  return {
    exporter: { status: exportStatus as number, stderr: exportErr() },
    importer: { status: importStatus as number, stdout: importOut(), stderr: importErr() },
  };
}

/** The command line in this process, for the many refusals: the same runCli the bin runs. */
async function cli(args: string[], env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const context: CliContext = {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    env,
    now: Date.now,
    sleep: async () => {},
  };
  const status = await runCli(args, context);
  return { status, stdout: out.join("\n"), stderr: err.join("\n") };
}

/** The import's table: status → [imported, already present]. */
function importCounts(stdout: string): Record<string, [number, number]> {
  const counts: Record<string, [number, number]> = {};
  for (const line of stdout.split("\n")) {
    const [status, imported, present] = line.trim().split(/\s+/);
    if (ALL_STATUSES.some((known) => known === status) && status !== undefined) {
      counts[status] = [Number(imported), Number(present)];
    }
  }
  return counts;
}

const sourceStatuses = {
  PROCESSING: 1,
  SUCCEEDED: 3,
  FAILED_RETRYABLE: 1,
  FAILED_FINAL: 2,
};

function unleased<T extends { record: EventRecord }>(event: T): T {
  return { ...event, record: { ...event.record, leaseOwner: null, leaseUntil: null } };
}

describe("gateway export", { timeout: 60_000 }, () => {
  it("covers every status, attempt kind and replay kind in its source", async () => {
    const events = await sourceContents();
    expect(events.map((e) => `${e.record.sender}/${e.record.eventId}`).sort()).toEqual(
      source.every.map((k) => `${k.sender}/${k.eventId}`).sort(),
    );
    const statuses = events.map((e) => e.record.status);
    for (const status of ALL_STATUSES) expect(statuses).toContain(status);
    const attempts = events.flatMap((e) => e.attempts);
    expect(attempts.map((a) => a.applied)).toEqual(expect.arrayContaining([true, false, null]));
    expect(events.flatMap((e) => e.replays).map((r) => r.forced)).toEqual(expect.arrayContaining([true, false]));
    const leased = events.find((e) => e.record.eventId === source.leased.eventId)?.record;
    expect(leased?.leaseUntil).toBeGreaterThan(Date.now() + 60_000);
  });

  it("writes a header with the format version, one line per event and an end line that counts them", () => {
    const run = gateway(["export", "--out", exportFile], { DATABASE_URL: sourceFile });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`exported 7 events from ${sourceFile}`);
    // The leased event says a process may still be running on the register.
    expect(run.stderr).toContain("warning: 1 of them held a lease not yet run out");
    const lines = readFileSync(exportFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(1 + 7 + 1);
    expect(lines[0]).toMatchObject({ type: "header", version: 5 });
    // No platform sent these events: none carries a delivery, and none has a line of its own.
    expect(lines.at(-1)).toEqual({ type: "end", events: 7, source_deliveries: 0 });
    const events = lines.slice(1, -1);
    expect(events.every((line) => line.type === "event" && line.source_delivery === null)).toBe(true);
    const { sender, eventId } = source.succeeded;
    const delivered = events.find((line) => line.event.sender === sender && line.event.event_id === eventId);
    expect(delivered?.event).toMatchObject({ status: "SUCCEEDED", response_status: 201 });
    expect(delivered?.event.response_body).toBe(source.succeeded.firstAnswer);
  });

  it("refuses a register file that is not there, creating nothing", () => {
    const missing = join(dir.path, "missing.db");
    const run = gateway(["export"], { DATABASE_URL: missing });
    expect([run.status, run.stdout]).toEqual([1, ""]);
    expect(run.stderr).toMatch(/no database at/);
    expect(existsSync(missing)).toBe(false);
  });
});

interface Target {
  name: "sqlite" | "postgres";
  env: Record<string, string>;
  open(): Promise<EventRegister>;
  /** Empties the target between tests. */
  prepare(): Promise<void>;
  done(): Promise<void>;
}

function sqliteTarget(): Target {
  const file = join(dir.path, "target.db");
  return {
    name: "sqlite",
    env: { DATABASE_URL: file },
    open: async () => new SqliteRegister(file),
    prepare: async () => {},
    done: async () => {},
  };
}

const pg = postgresForTests();

function targets(): Target[] {
  const list: Target[] = [sqliteTarget()];
  if (!pg.enabled) return list;
  let url = "";
  let drop: () => Promise<void> = async () => {};
  list.push({
    name: "postgres",
    get env() {
      return { DATABASE_URL: url };
    },
    open: () => PostgresRegister.open(url, { poolMax: 2 }),
    prepare: async () => {
      pg.require();
      const database = await pg.database();
      if (database === undefined) throw new Error("no database");
      url = database.url;
      drop = () => database.drop();
    },
    done: () => drop(),
  });
  return list;
}

describe.each(targets())("gateway import into a fresh $name register", { timeout: 90_000 }, (target) => {
  let onec: OnecEmulator;
  beforeAll(async () => {
    await target.prepare();
    onec = await startOnecEmulator();
  });
  afterAll(async () => {
    await onec?.close();
    await target.done();
  });

  it("takes every event, attempt and replay as they were, leases aside, counting them by status", async () => {
    let output: string;
    if (target.name === "postgres") {
      const piped = await exportPipedIntoImport({ DATABASE_URL: sourceFile }, target.env);
      expect([piped.exporter.status, piped.importer.status, piped.importer.stderr]).toEqual([0, 0, ""]);
      expect(piped.exporter.stderr).toContain("exported 7 events");
      output = piped.importer.stdout;
    } else {
      const run = gateway(["import", "--in", exportFile, "--ignore-leases"], target.env);
      expect([run.status, run.stderr]).toEqual([0, ""]);
      output = run.stdout;
    }
    expect(output).toMatch(/^imported 7 events into .+; 0 already present/);
    expect(importCounts(output)).toEqual(
      Object.fromEntries(Object.entries(sourceStatuses).map(([status, n]) => [status, [n, 0]])),
    );
    const register = await target.open();
    try {
      const expected = (await sourceContents()).map(unleased);
      expect(await contents(register)).toEqual(expected);
    } finally {
      await register.close();
    }
  });

  it("finds every event already present when the same export is imported again, and changes none", async () => {
    const before = await (async () => {
      const register = await target.open();
      try {
        return await contents(register);
      } finally {
        await register.close();
      }
    })();
    const again = await cli(["import", "--in", exportFile], target.env);
    expect([again.status, again.stderr]).toEqual([0, ""]);
    expect(again.stdout).toMatch(/^imported 0 events into .+; 7 already present/);
    expect(importCounts(again.stdout)).toEqual(
      Object.fromEntries(Object.entries(sourceStatuses).map(([status, n]) => [status, [0, n]])),
    );
    const register = await target.open();
    try {
      expect(await contents(register)).toEqual(before);
    } finally {
      await register.close();
    }
  });

  it("answers a resend of a delivered event with its first answer, and delivers what was pending", async () => {
    const gw = await startTestGateway({
      ONEC_URL: onec.url,
      DATABASE_URL: target.env.DATABASE_URL ?? "",
      SENDER_TOKENS,
      DELIVERY_POLL_MS: "100",
    });
    try {
      const resend = await send(gw.url, "shop-a", source.succeeded.body);
      expect([resend.status, resend.headers["idempotent-replayed"]]).toEqual([200, "true"]);
      expect(resend.text).toBe(source.succeeded.firstAnswer);
      const { retrying, leased } = source;
      const delivered = [retrying, leased].map((key) => settledUntil(gw.gateway.register, key, succeeded));
      await ordersFor(
        onec,
        [retrying, leased].map((k) => onecIdempotencyKey(k.sender, k.eventId)),
      );
      const [nowRetrying, nowLeased] = await Promise.all(delivered);
      expect([nowRetrying?.status, nowLeased?.status]).toEqual([EventStatus.SUCCEEDED, EventStatus.SUCCEEDED]);
      // Taken at once despite the old 10-minute lease, under the next fencing token.
      expect(nowLeased?.leaseToken).toBe(2);
      const attempts = await gw.gateway.register.listAttempts(leased.sender, leased.eventId);
      expect(attempts.map((a) => [a.leaseToken, a.worker === "old-worker", a.outcome])).toEqual([
        [1, true, null],
        [2, false, "delivered"],
      ]);
      for (const key of [retrying, leased]) expect(ordersOf(onec, onecIdempotencyKey(key.sender, key.eventId))).toBe(1);
      // Only the pending events went to 1C: the finished ones were answered from the register.
      expect(onec.orders()).toHaveLength(2);
    } finally {
      await gw.close();
    }
  });
});

describe("gateway import refuses bad input", { timeout: 60_000 }, () => {
  let target: string;
  let counter = 0;
  const exportLines = () => readFileSync(exportFile, "utf8").trimEnd().split("\n");
  const eventLine = (index: number) => JSON.parse(exportLines()[index] ?? "null");

  async function importing(lines: string[]) {
    counter += 1;
    target = join(dir.path, `refused-${counter}.db`);
    const input = join(dir.path, `input-${counter}.ndjson`);
    writeFileSync(input, `${lines.join("\n")}\n`);
    // The leased event is the newest, on line 2: these refusals are of the format, not of leases.
    return cli(["import", "--in", input, "--ignore-leases"], { DATABASE_URL: target });
  }

  async function held(index: number): Promise<EventRecord | undefined> {
    const { sender, event_id } = eventLine(index).event;
    const register = new SqliteRegister(target);
    try {
      return await register.find(sender, event_id);
    } finally {
      await register.close();
    }
  }

  it("that is not an export, before touching the database", async () => {
    const [, ...events] = exportLines();
    const run = await importing(events);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^gateway import: line 1: not a gateway register export/);
    expect(existsSync(target)).toBe(false);
  });

  it("of a format version it does not know, before touching the database", async () => {
    const [header, ...rest] = exportLines();
    const run = await importing([JSON.stringify({ ...JSON.parse(header ?? "{}"), version: 99 }), ...rest]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^gateway import: line 1: format version 99 is not one this gateway reads/);
    expect(existsSync(target)).toBe(false);
  });

  it("at a line that is not JSON: the events before it are in, nothing after", async () => {
    const lines = exportLines();
    const run = await importing([...lines.slice(0, 3), '{"type":"event",', ...lines.slice(3)]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^gateway import: line 4: not JSON/);
    expect(run.stdout).toMatch(/^imported 2 events/);
    expect(await held(1)).toBeDefined();
    expect(await held(2)).toBeDefined();
    expect(await held(3)).toBeUndefined();
  });

  it("at an event that breaks the format, naming the field, writing nothing of it", async () => {
    const lines = exportLines();
    const bad = eventLine(2);
    bad.event.status = "DONE";
    const run = await importing([...lines.slice(0, 2), JSON.stringify(bad), ...lines.slice(3)]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^gateway import: line 3: \/event\/status: .*; nothing of it was imported$/);
    expect(await held(1)).toBeDefined();
    expect(await held(2)).toBeUndefined();
  });

  it("at an attempt whose fencing token is above its event's, which a later claim would collide with", async () => {
    const lines = exportLines();
    const index = lines.findIndex((line) => JSON.parse(line).delivery_attempts?.length > 0);
    const bad = eventLine(index);
    bad.delivery_attempts[0].lease_token = bad.event.lease_token + 1;
    const run = await importing([...lines.slice(0, index), JSON.stringify(bad), ...lines.slice(index + 1)]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`line ${index + 1}: /delivery_attempts/0/lease_token`);
    expect(await held(index)).toBeUndefined();
  });

  it("that was cut short (no end line), after importing what it holds", async () => {
    const lines = exportLines();
    const run = await importing(lines.slice(0, 4));
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/without the export's end line: it was cut short/);
    expect(run.stdout).toMatch(/^imported 3 events/);
  });

  it("whose end line counts other events than it held", async () => {
    const lines = exportLines();
    const run = await importing([
      ...lines.slice(0, 3),
      JSON.stringify({ type: "end", events: 7, source_deliveries: 0 }),
    ]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/line 4: the end line counts 7 events, the input held 2/);
  });
});
