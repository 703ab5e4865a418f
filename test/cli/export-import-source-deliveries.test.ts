import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventRegister } from "../../src/register/port.ts";
import { PostgresRegister } from "../../src/register/postgres/postgres-register.ts";
import type { MovedDelivery, SourceDelivery, SourceDeliveryInput } from "../../src/register/source-port.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { postgresForTests } from "../support/postgres.ts";
import { siteOrderOf } from "../support/records.ts";
import { shopifyPaid, tildaUnmapped, wooUnpaid } from "../support/source-deliveries.ts";
import { tempDir } from "../support/temp.ts";
import { gateway } from "./cli-support.ts";

/**
 * Issue 24 kept the platforms' webhook deliveries in the register
 * (source_deliveries), and an unmapped one is a paid order the gateway
 * acknowledged but could not map: its only record until support maps it
 * again. Moving a register (`gateway export` → `gateway import`, SQLite ⇄
 * PostgreSQL) must carry every delivery: the accepted one with its event, the
 * ignored and unmapped ones (remapped or not) on their own, each showing the
 * same afterwards (ofEvent, list), ids aside. An export written before
 * deliveries moved (format version 2) must still import.
 */

const dir = tempDir("gateway-export-sources-");
afterAll(() => dir.remove());
const pg = postgresForTests();

const T0 = Date.parse("2026-11-30T10:00:00Z");
const MINUTE = 60_000;

/** A Shopify order that became an event, a WooCommerce update ignored, a Tilda order kept unmapped. */
const SHOPIFY_PAID = shopifyPaid({ receivedAt: T0 });
const WOO_IGNORED = wooUnpaid({ receivedAt: T0 + MINUTE });
const TILDA_UNMAPPED = tildaUnmapped({ receivedAt: T0 + 2 * MINUTE });
/** Another unmapped Tilda order, which support has since mapped again into an event. */
const TILDA_REMAPPED = tildaUnmapped({
  key: "tilda:1234567891",
  payload: "tranid=5551234%3A1234567891&formid=form5551234&payment%5Borderid%5D=1234567891&payment%5Bamount%5D=990",
  correlationId: "corr-tilda-2",
  receivedAt: T0 + 3 * MINUTE,
});
const REMAPPED_AT = T0 + 30 * MINUTE;

/** The events of the fixture: one per platform order that became one, and a sender's own. */
const EVENTS = {
  shopify: { sender: "shop-main", eventId: SHOPIFY_PAID.key },
  remapped: { sender: "shop-tilda", eventId: TILDA_REMAPPED.key },
  own: { sender: "shop-main", eventId: "site-order-77" },
} as const;

async function fill(register: EventRegister): Promise<void> {
  const reserve = (key: { sender: string; eventId: string }, now: number, source?: SourceDeliveryInput) =>
    register.reserve({
      ...key,
      fingerprint: `fp-${key.eventId}`,
      policyVersion: "test",
      body: JSON.stringify({ event_id: key.eventId }),
      ...siteOrderOf(JSON.stringify({ event_id: key.eventId })),
      correlationId: `c-${key.eventId}`,
      now,
      ...(source === undefined ? {} : { source }),
    });
  await reserve(EVENTS.shopify, SHOPIFY_PAID.receivedAt, SHOPIFY_PAID);
  await register.sources.record(WOO_IGNORED);
  await register.sources.record(TILDA_UNMAPPED);
  const remapped = await register.sources.record(TILDA_REMAPPED);
  // Support fixed the mapping: the order is recorded as an event, then the delivery marked.
  await reserve(EVENTS.remapped, REMAPPED_AT);
  expect(await register.sources.markRemapped(remapped.id, EVENTS.remapped.eventId, REMAPPED_AT, REMAP_AUDIT)).toBe(
    true,
  );
  await reserve(EVENTS.own, T0 + 40 * MINUTE);
}

/** Who mapped the Tilda order again, and why: carried by the export like the time. */
const REMAP_AUDIT = { by: "anna", reason: "SKU MUG-ENM-350 added to the map" };
const NOT_REMAPPED = { eventId: null, remappedAt: null, remappedBy: null, remapReason: null };

/** What the fixture put in, as any register must show it, ids aside: newest first. */
const EXPECTED_LIST: MovedDelivery[] = [
  {
    ...TILDA_REMAPPED,
    eventId: EVENTS.remapped.eventId,
    remappedAt: REMAPPED_AT,
    remappedBy: REMAP_AUDIT.by,
    remapReason: REMAP_AUDIT.reason,
  },
  { ...TILDA_UNMAPPED, ...NOT_REMAPPED },
  { ...WOO_IGNORED, ...NOT_REMAPPED },
  { ...SHOPIFY_PAID, ...NOT_REMAPPED, eventId: EVENTS.shopify.eventId },
];

interface Place {
  env: { DATABASE_URL: string };
  open(): Promise<EventRegister>;
  drop(): Promise<void>;
}

type BackendName = "sqlite" | "postgres";
const BACKENDS: BackendName[] = pg.enabled ? ["sqlite", "postgres"] : ["sqlite"];

let places = 0;
async function freshPlace(name: BackendName): Promise<Place> {
  if (name === "sqlite") {
    places += 1;
    const file = join(dir.path, `register-${places}.db`);
    return { env: { DATABASE_URL: file }, open: async () => new SqliteRegister(file), drop: async () => {} };
  }
  pg.require();
  const database = await pg.database();
  if (database === undefined) throw new Error("no PostgreSQL database");
  return {
    env: { DATABASE_URL: database.url },
    open: () => PostgresRegister.open(database.url, { poolMax: 2, clock: "node" }),
    drop: () => database.drop(),
  };
}

const withoutId = ({ id: _id, ...delivery }: SourceDelivery): MovedDelivery => delivery;

/** What support sees of the deliveries: the list (all, and by outcome) and each event's, ids aside. */
async function deliveriesIn(place: Place) {
  const register = await place.open();
  try {
    const list = async (outcome?: "accepted" | "ignored" | "unmapped") =>
      (await register.sources.list({ limit: 100, ...(outcome === undefined ? {} : { outcome }) })).map(withoutId);
    const ofEvent = async (key: { sender: string; eventId: string }) => {
      const delivery = await register.sources.ofEvent(key.sender, key.eventId);
      return delivery === undefined ? undefined : withoutId(delivery);
    };
    return {
      all: await list(),
      accepted: await list("accepted"),
      ignored: await list("ignored"),
      unmapped: await list("unmapped"),
      shopify: await ofEvent(EVENTS.shopify),
      remapped: await ofEvent(EVENTS.remapped),
      own: await ofEvent(EVENTS.own),
    };
  } finally {
    await register.close();
  }
}

/** The export's lines, parsed. */
function linesOf(file: string): Record<string, unknown>[] {
  return readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line));
}

function importInto(place: Place, file: string) {
  return gateway(["import", "--in", file], place.env);
}

/** The import's table of deliveries: outcome → [imported, already present]. */
function deliveryCounts(stdout: string): Record<string, [number, number]> {
  const counts: Record<string, [number, number]> = {};
  for (const line of stdout.split("\n")) {
    const [outcome, imported, present] = line.trim().split(/\s+/);
    if (outcome === "accepted" || outcome === "ignored" || outcome === "unmapped") {
      counts[outcome] = [Number(imported), Number(present)];
    }
  }
  return counts;
}

describe.each(BACKENDS)("platform deliveries exported from %s", { timeout: 60_000 }, (sourceName) => {
  const exportFile = join(dir.path, `export-from-${sourceName}.ndjson`);
  let source: Place;

  beforeAll(async () => {
    source = await freshPlace(sourceName);
    const register = await source.open();
    try {
      await fill(register);
    } finally {
      await register.close();
    }
  });
  afterAll(() => source?.drop());

  it("are in the source as the fixture put them", async () => {
    const seen = await deliveriesIn(source);
    expect(seen.all).toEqual(EXPECTED_LIST);
    expect(seen.shopify).toEqual(EXPECTED_LIST[3]);
    expect(seen.remapped).toEqual(EXPECTED_LIST[0]);
    expect(seen.own).toBeUndefined();
  });

  it("are written in format version 3: the accepted one in its event's line, the others on their own, counted", () => {
    const run = gateway(["export", "--out", exportFile], source.env);
    expect(run.status).toBe(0);
    expect(run.stderr).toContain("exported 3 events from");
    expect(run.stderr).toContain("exported 4 platform webhook deliveries: accepted 1, ignored 1, unmapped 2");
    const lines = linesOf(exportFile);
    expect(lines[0]).toMatchObject({ type: "header", version: 5 });
    expect(lines.at(-1)).toEqual({ type: "end", events: 3, source_deliveries: 3 });

    const events = lines.filter((line) => line.type === "event") as {
      event: { event_id: string };
      source_delivery: unknown;
    }[];
    const sourceOf = Object.fromEntries(events.map((line) => [line.event.event_id, line.source_delivery]));
    expect(sourceOf).toEqual({
      [EVENTS.shopify.eventId]: {
        platform: "shopify",
        key: SHOPIFY_PAID.key,
        reason: null,
        ids: SHOPIFY_PAID.ids,
        payload: SHOPIFY_PAID.payload,
        content_type: "application/json",
        correlation_id: "corr-shopify-1",
        received_at: T0,
      },
      // Remapped, not accepted: its delivery has its own line.
      [EVENTS.remapped.eventId]: null,
      [EVENTS.own.eventId]: null,
    });

    // After every event (a remapped one's event is in first), oldest first.
    const firstSource = lines.findIndex((line) => line.type === "source_delivery");
    expect(lines.slice(firstSource, -1).every((line) => line.type === "source_delivery")).toBe(true);
    const deliveries = lines.slice(firstSource, -1).map((line) => line.source_delivery);
    expect(deliveries).toEqual([
      {
        sender: "shop-woo",
        platform: "woocommerce",
        key: WOO_IGNORED.key,
        outcome: "ignored",
        reason: WOO_IGNORED.reason,
        event_id: null,
        ids: WOO_IGNORED.ids,
        payload: WOO_IGNORED.payload,
        content_type: "application/json",
        correlation_id: "corr-woo-1",
        received_at: T0 + MINUTE,
        remapped_at: null,
        remapped_by: null,
        remap_reason: null,
      },
      expect.objectContaining({ key: TILDA_UNMAPPED.key, outcome: "unmapped", event_id: null, remapped_at: null }),
      expect.objectContaining({
        key: TILDA_REMAPPED.key,
        outcome: "unmapped",
        event_id: EVENTS.remapped.eventId,
        remapped_at: REMAPPED_AT,
        remapped_by: REMAP_AUDIT.by,
        remap_reason: REMAP_AUDIT.reason,
        payload: TILDA_REMAPPED.payload,
      }),
    ]);
  });

  it.each(BACKENDS)("show the same after `gateway import` into a fresh %s register, and again once", async (target) => {
    const place = await freshPlace(target);
    try {
      const run = importInto(place, exportFile);
      expect([run.status, run.stderr]).toEqual([0, ""]);
      expect(run.stdout).toMatch(/^imported 3 events into .+; 0 already present/);
      expect(run.stdout).toContain("imported 4 platform webhook deliveries; 0 already present");
      expect(deliveryCounts(run.stdout)).toEqual({ accepted: [1, 0], ignored: [1, 0], unmapped: [2, 0] });
      const moved = await deliveriesIn(place);
      expect(moved).toEqual(await deliveriesIn(source));
      // Support still finds the unpaid-for order, and can map it again.
      expect(moved.unmapped).toEqual([EXPECTED_LIST[0], EXPECTED_LIST[1]]);

      const again = importInto(place, exportFile);
      expect([again.status, again.stderr]).toEqual([0, ""]);
      expect(again.stdout).toContain("imported 0 platform webhook deliveries; 4 already present");
      expect(deliveryCounts(again.stdout)).toEqual({ accepted: [0, 1], ignored: [0, 1], unmapped: [0, 2] });
      expect(await deliveriesIn(place)).toEqual(moved);
    } finally {
      await place.drop();
    }
  });
});

describe("an export written before platform deliveries moved", { timeout: 60_000 }, () => {
  let current: Record<string, unknown>[];

  beforeAll(async () => {
    const source = await freshPlace("sqlite");
    const register = await source.open();
    try {
      await fill(register);
    } finally {
      await register.close();
    }
    const file = join(dir.path, "current.ndjson");
    expect(gateway(["export", "--out", file], source.env).status).toBe(0);
    current = linesOf(file);
  });

  /**
   * The lines as format version 2 wrote them: no source_delivery anywhere, an end line counting events only,
   * and no trace_context (version 4).
   */
  function versionTwo(): string {
    const lines = current
      .filter((line) => line.type !== "source_delivery")
      .map((line) => {
        if (line.type === "header") return { ...line, version: 2 };
        if (line.type === "end") return { type: "end", events: line.events };
        const { source_delivery: _source, ...rest } = line;
        const { trace_context: _trace, ...event } = line.event as Record<string, unknown>;
        return { ...rest, event };
      });
    return `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
  }

  function write(name: string, text: string): string {
    const file = join(dir.path, name);
    writeFileSync(file, text);
    return file;
  }

  it.each(BACKENDS)("(format version 2) imports into %s: every event, no delivery", async (target) => {
    const place = await freshPlace(target);
    try {
      const run = importInto(place, write(`version-2-into-${target}.ndjson`, versionTwo()));
      expect([run.status, run.stderr]).toEqual([0, ""]);
      expect(run.stdout).toMatch(/^imported 3 events/);
      expect(run.stdout).toContain("imported 0 platform webhook deliveries; 0 already present");
      const register = await place.open();
      try {
        for (const key of Object.values(EVENTS)) expect(await register.find(key.sender, key.eventId)).toBeDefined();
        expect(await register.sources.list({ limit: 10 })).toEqual([]);
      } finally {
        await register.close();
      }
    } finally {
      await place.drop();
    }
  });

  it("is told from a current one by its version: a delivery line in a version 2 export is refused", async () => {
    const v2 = versionTwo().trimEnd().split("\n");
    const delivery = current.find((line) => line.type === "source_delivery");
    const lines = [...v2.slice(0, -1), JSON.stringify(delivery), ...v2.slice(-1)];
    const place = await freshPlace("sqlite");
    const run = importInto(place, write("v2-with-delivery.ndjson", `${lines.join("\n")}\n`));
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`line ${lines.length - 1}: a "source_delivery" line in a version 2 export`);
  });

  it("refuses a current end line that counts other deliveries than the input held", async () => {
    const lines = current.map((line) => (line.type === "end" ? { ...line, source_deliveries: 2 } : line));
    const place = await freshPlace("sqlite");
    const run = importInto(place, write("bad-end.ndjson", `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`));
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/the end line counts 2 platform deliveries, the input held 3/);
  });

  it("refuses an ignored delivery that names an event, writing nothing of that line", async () => {
    const index = current.findIndex(
      (line) => line.type === "source_delivery" && (line.source_delivery as MovedDeliveryLine).outcome === "ignored",
    );
    const lines = current.map((line, at) =>
      at === index
        ? {
            ...line,
            source_delivery: {
              ...(line.source_delivery as MovedDeliveryLine),
              event_id: EVENTS.own.eventId,
              remapped_at: T0,
            },
          }
        : line,
    );
    const place = await freshPlace("sqlite");
    const run = importInto(place, write("bad-ignored.ndjson", `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`));
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`line ${index + 1}: /source_delivery: an ignored delivery has no event_id`);
    const register = await place.open();
    try {
      expect(await register.sources.list({ outcome: "ignored", limit: 10 })).toEqual([]);
    } finally {
      await register.close();
    }
  });
});

type MovedDeliveryLine = { outcome: string } & Record<string, unknown>;
