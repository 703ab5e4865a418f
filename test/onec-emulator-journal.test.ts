import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type EmulatorOrder, type OnecEmulator, startOnecEmulator } from "../src/onec-emulator/emulator.ts";
import { readJournal } from "../src/onec-emulator/journal.ts";
import { tempDir } from "./support/temp.ts";

const repoRoot = new URL("../", import.meta.url).pathname;
const EXAMPLE = readFileSync(new URL("../schemas/examples/order-paid.json", import.meta.url), "utf8");
const OTHER_BODY = JSON.stringify({ ...JSON.parse(EXAMPLE), occurred_at: "2026-11-29T12:35:00Z" });

interface OrderAnswer {
  status: number;
  order: { id: string; number: string } | undefined;
}

async function post(url: string, key: string, body = EXAMPLE, signal?: AbortSignal): Promise<OrderAnswer> {
  const response = await fetch(`${url}/v1/orders/paid`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key, "x-correlation-id": `corr-${key}` },
    body,
    ...(signal === undefined ? {} : { signal }),
  });
  const json = (await response.json()) as { order?: { id: string; number: string } };
  return { status: response.status, order: json.order };
}

interface ChildEmulator {
  url: string;
  child: ChildProcess;
  /** What it printed before listening: the restore line among it. */
  lines: string[];
}

/** `npm run onec-emulator` as a real process on a port of its own choosing, ready once it says it listens. */
async function spawnEmulator(journal: string): Promise<ChildEmulator> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/onec-emulator/main.ts"], {
    cwd: repoRoot,
    env: { ...process.env, ONEC_EMULATOR_PORT: "0", ONEC_EMULATOR_HOST: "127.0.0.1", ONEC_EMULATOR_JOURNAL: journal },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      lines.push(line);
      const match = /^1C emulator listening on (\S+)/.exec(line);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    child.once("exit", (code, signal) => reject(new Error(`emulator exited (${signal ?? code}) before listening`)));
  });
  return { url, child, lines };
}

async function sigkill(child: ChildProcess): Promise<void> {
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

const dir = tempDir("onec-journal-");
const children: ChildProcess[] = [];
const emulators: OnecEmulator[] = [];

async function startInProcess(journalPath: string, hangAfterCommit = false): Promise<OnecEmulator> {
  const emulator = await startOnecEmulator({ journalPath, faults: { hangAfterCommit } });
  emulators.push(emulator);
  return emulator;
}

afterEach(async () => {
  await Promise.all(emulators.splice(0).map((e) => e.close()));
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill();
});
afterAll(() => dir.remove());

describe("the emulator's order journal", () => {
  it("keeps keys, orders and the sequence across kill -9 of the emulator process", { timeout: 30_000 }, async () => {
    const journal = join(dir.path, "kill.jsonl");
    const first = await spawnEmulator(journal);
    const a = await post(first.url, "evt-a");
    const b = await post(first.url, "evt-b");
    expect([a.status, b.status]).toEqual([201, 201]);
    await sigkill(first.child);

    const second = await spawnEmulator(journal);
    expect(second.lines).toContain(`1C emulator journal ${journal}: 2 orders restored`);
    const replay = await post(second.url, "evt-a");
    expect(replay).toEqual({ status: 200, order: a.order });
    expect((await post(second.url, "evt-b", OTHER_BODY)).status).toBe(409);
    const next = await post(second.url, "evt-c");
    expect(next.status).toBe(201);
    expect(next.order?.number).toBe("ORD-000003");
    const lookup = (await (await fetch(`${second.url}/v1/events/evt-b`)).json()) as { order: unknown };
    expect(lookup.order).toEqual(b.order);
    expect(readJournal(journal).orders.map((o) => o.key)).toEqual(["evt-a", "evt-b", "evt-c"]);
  });

  it("writes the order before hang-after-commit leaves the caller without an answer", async () => {
    const journal = join(dir.path, "hang.jsonl");
    const hung = await startInProcess(journal, true);
    const committed = once(hung.events, "committed") as Promise<[EmulatorOrder]>;
    const caller = new AbortController();
    const lost = post(hung.url, "evt-h", EXAMPLE, caller.signal).catch((error: unknown) => error);
    const [order] = await committed;
    expect(readJournal(journal).orders).toEqual([order]);
    caller.abort();
    await lost;
    await hung.close();

    const restarted = await startInProcess(journal);
    expect(await post(restarted.url, "evt-h")).toEqual({ status: 200, order: order.order });
  });

  it("drops a torn last line, repairs the file and continues the sequence", async () => {
    const journal = join(dir.path, "torn.jsonl");
    const kept: EmulatorOrder = {
      key: "evt-kept",
      hash: "0".repeat(64),
      order: { id: "11111111-1111-4111-8111-111111111111", number: "ORD-000007" },
      correlationId: "corr-kept",
      createdAt: "2026-11-30T10:00:00.000Z",
    };
    writeFileSync(journal, `${JSON.stringify(kept)}\n`);
    appendFileSync(journal, '{"key":"evt-torn","hash":"ab');

    const emulator = await startInProcess(journal);
    expect(emulator.orders()).toEqual([kept]);
    const next = await post(emulator.url, "evt-next");
    expect(next.order?.number).toBe("ORD-000008");
    const reread = readJournal(journal);
    expect(reread.goodBytes).toBe(reread.totalBytes);
    expect(reread.orders.map((o) => o.key)).toEqual(["evt-kept", "evt-next"]);
  });

  it("refuses to start on a journal damaged before its last line", async () => {
    const journal = join(dir.path, "damaged.jsonl");
    writeFileSync(journal, 'not json\n{"also":"not an order"}\n');
    await expect(startOnecEmulator({ journalPath: journal })).rejects.toThrow(/line 1 is not an order/);
  });

  it("forgets journaled orders on reset, also across a restart", async () => {
    const journal = join(dir.path, "reset.jsonl");
    const emulator = await startInProcess(journal);
    await post(emulator.url, "evt-r");
    const reset = await fetch(`${emulator.url}/_emulator/reset`, { method: "POST" });
    expect(reset.status).toBe(204);
    await emulator.close();

    const restarted = await startInProcess(journal);
    expect(restarted.orders()).toEqual([]);
    expect((await post(restarted.url, "evt-r")).order?.number).toBe("ORD-000001");
  });
});
