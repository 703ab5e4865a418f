import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { EventStatus } from "../../src/domain/event-status.ts";
import type { EventRecord } from "../../src/register/port.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { orderPaidEvent } from "../support/events.ts";
import { siteOrderOf } from "../support/records.ts";
import { gatewayBin } from "../support/start-script.ts";
import { tempDir } from "../support/temp.ts";

export const repoRoot = new URL("../../", import.meta.url).pathname;
const SENDER = "default";

/** The environment of this process minus every gateway setting, plus `extra`. */
export function cliEnv(extra: Record<string, string>): Record<string, string> {
  const base = Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined &&
      !/^(ONEC_|DATABASE_URL$|DELIVERY_|RETRY_|LOG_LEVEL$|DELIVERER$|OPERATORS_FILE$|GATEWAY_TOKEN$|ADMIN_TOKEN$|SENDER_TOKENS$|SENDERS_FILE$)/.test(
        entry[0],
      ),
  );
  return { ...Object.fromEntries(base), ...extra };
}

/** `node dist/cli/main.js …` (the bin, built) from the repo root, as an operator would run it. */
export function gateway(args: string[], env: Record<string, string>): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [gatewayBin(), ...args], {
    cwd: repoRoot,
    env: cliEnv(env),
    encoding: "utf8",
    timeout: 20_000,
  });
}

/** A SQLite register file in a fresh temp folder, filled through SqliteRegister itself. */
export class TestDatabase {
  readonly #dir = tempDir("gateway-cli-");
  readonly file = join(this.#dir.path, "gateway.db");
  readonly env = { DATABASE_URL: this.file };
  /** Created (and migrated) at once; reopened on use after close(): the CLI runs while it is closed. */
  #register: SqliteRegister | undefined = new SqliteRegister(this.file);

  get register(): SqliteRegister {
    this.#register ??= new SqliteRegister(this.file);
    return this.#register;
  }

  /** A new PROCESSING event, due now, with a valid order-paid body (the 1C emulator parses it). */
  async pending(): Promise<string> {
    const event = orderPaidEvent();
    await this.register.reserve({
      sender: SENDER,
      eventId: event.event_id,
      fingerprint: `fp-${event.event_id}`,
      policyVersion: "test",
      body: JSON.stringify(event),
      ...siteOrderOf(JSON.stringify(event)),
      correlationId: `c-${event.event_id}`,
      now: Date.now(),
    });
    return event.event_id;
  }

  /** A new event after one attempt that 1C refused with 422. */
  async failedFinal(): Promise<string> {
    const eventId = await this.pending();
    const startedAt = Date.now();
    const lease = await this.#claim(eventId, startedAt);
    await this.register.settle(
      lease,
      {
        status: EventStatus.FAILED_FINAL,
        error: "1C refused: unknown SKU",
        errorClass: "onec_rejected",
        response: { status: 422, body: "{}" },
      },
      {
        startedAt,
        durationMs: 1,
        outcome: "rejected",
        httpStatus: 422,
        errorClass: "onec_rejected",
        detail: "unknown SKU",
      },
      startedAt + 1,
    );
    return eventId;
  }

  /** A new event 1C has taken. */
  async succeeded(): Promise<string> {
    const eventId = await this.pending();
    const startedAt = Date.now();
    const lease = await this.#claim(eventId, startedAt);
    await this.register.settle(
      lease,
      { status: EventStatus.SUCCEEDED, order: { id: "o-1", number: "ORD-1" }, response: { status: 201, body: "{}" } },
      { startedAt, durationMs: 1, outcome: "delivered", httpStatus: 201 },
      startedAt + 1,
    );
    return eventId;
  }

  async find(eventId: string): Promise<EventRecord | undefined> {
    return this.register.find(SENDER, eventId);
  }

  /** The audit rows of `replay`, read with plain SQL. */
  replays(eventId: string): { requested_by: string; reason: string; forced: number; from_status: string }[] {
    const db = new Database(this.file, { readonly: true });
    try {
      return db
        .prepare("SELECT requested_by, reason, forced, from_status FROM event_replays WHERE event_id = ? ORDER BY id")
        .all(eventId) as { requested_by: string; reason: string; forced: number; from_status: string }[];
    } finally {
      db.close();
    }
  }

  async close(): Promise<void> {
    await this.#register?.close();
    this.#register = undefined;
  }

  async remove(): Promise<void> {
    await this.close();
    this.#dir.remove();
  }

  async #claim(eventId: string, now: number) {
    const batch = await this.register.claim({
      owner: "test",
      now,
      leaseMs: 60_000,
      limit: 1,
      only: { sender: SENDER, eventId },
    });
    const claim = batch[0];
    if (claim === undefined) throw new Error(`could not claim ${eventId}`);
    return claim.lease;
  }
}
