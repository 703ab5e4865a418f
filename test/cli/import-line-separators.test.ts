import { spawnSync } from "node:child_process";
import { closeSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import type { EventRegister } from "../../src/register/port.ts";
import type { SourceDeliveryInput } from "../../src/register/source-port.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway } from "../support/gateway.ts";
import { postEvent } from "../support/http.ts";
import { siteOrderOf } from "../support/records.ts";
import { shopifyPaid, wooUnpaid } from "../support/source-deliveries.ts";
import { gatewayBin } from "../support/start-script.ts";
import { tempDir } from "../support/temp.ts";
import { cliEnv, gateway, repoRoot } from "./cli-support.ts";

/**
 * Review finding (HIGH): `gateway import` read its input with readline, which
 * also ends a line at U+2028 and U+2029. JSON.stringify writes both raw inside
 * strings, so an export holding an event with either (an address typed with a
 * line separator) stopped the move at that event ("line N: not JSON"). The
 * export is NDJSON: a line ends at "\n" (docs/operations.md). And a line longer
 * than import reads (128 MiB, docs/operations.md) is refused as a bad line,
 * named by its number, after the summary, not with a stack trace.
 */

const dir = tempDir("gateway-import-separators-");
afterAll(() => dir.remove());

const LS = "\u2028";
const PS = "\u2029";
const MiB = 1024 * 1024;

let counter = 0;
function freshFile(name: string): string {
  counter += 1;
  return join(dir.path, `${name}-${counter}`);
}

/** What a register holds of one event and the platform deliveries, ids aside. */
async function held(file: string, eventId: string) {
  const register = new SqliteRegister(file);
  try {
    const record = await register.find("default", eventId);
    const deliveries = await register.sources.list({ limit: 100 });
    return {
      body: record?.body,
      status: record?.status,
      payloads: deliveries.map((delivery) => [delivery.outcome, delivery.payload]),
    };
  } finally {
    await register.close();
  }
}

describe("gateway import of events holding U+2028 and U+2029", { timeout: 60_000 }, () => {
  const source = join(dir.path, "source.db");
  const exportFile = join(dir.path, "export.ndjson");
  let eventId: string;

  beforeAll(async () => {
    // Accepted through a real gateway, delivered to the 1C emulator: the body as the gateway stores it.
    const onec = await startOnecEmulator();
    const gw = await startTestGateway({ ONEC_URL: onec.url, DATABASE_URL: source });
    try {
      const event = orderPaidEvent((e) => {
        e.order.delivery = { method: "courier", address: `Москва${LS}кв. 5`, price: "300.00" };
        e.order.customer.name = `Анна${PS}Смирнова`;
      });
      eventId = event.event_id;
      const answer = await postEvent(gw.url, event);
      expect(answer.status).toBe(201);
    } finally {
      await gw.close();
      await onec.close();
    }
    // A platform's delivery the gateway ignored, whose payload holds both too.
    const register: EventRegister = new SqliteRegister(source);
    try {
      const ignored: SourceDeliveryInput = wooUnpaid({
        sender: "default",
        payload: `{"id":1042,"status":"pending","shipping":{"address_1":"Тверская${LS}д. 1${PS}"}}`,
      });
      await register.sources.record(ignored);
    } finally {
      await register.close();
    }
    const run = gateway(["export", "--out", exportFile], { DATABASE_URL: source });
    expect([run.status, run.stdout]).toEqual([0, ""]);
    // The export holds them raw, as JSON.stringify writes them: what import must read.
    const text = readFileSync(exportFile, "utf8");
    expect(text).toContain(LS);
    expect(text).toContain(PS);
    expect(text.trimEnd().split("\n")).toHaveLength(4);
  });

  it("imports from --in FILE: every event and delivery arrives as it was", async () => {
    const target = freshFile("target.db");
    const run = gateway(["import", "--in", exportFile], { DATABASE_URL: target });
    expect([run.status, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toMatch(/^imported 1 events into .+; 0 already present/);
    expect(run.stdout).toContain("imported 1 platform webhook deliveries; 0 already present");
    const before = await held(source, eventId);
    expect(before.body).toContain(`Москва${LS}кв. 5`);
    expect(before.body).toContain(`Анна${PS}Смирнова`);
    expect(await held(target, eventId)).toEqual(before);
  });

  it("imports from stdin the same way", async () => {
    const target = freshFile("target.db");
    const run = spawnSync(process.execPath, [gatewayBin(), "import"], {
      cwd: repoRoot,
      env: cliEnv({ DATABASE_URL: target }),
      input: readFileSync(exportFile),
      encoding: "utf8",
      timeout: 20_000,
    });
    expect([run.status, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toMatch(/^imported 1 events into .+; 0 already present/);
    expect(await held(target, eventId)).toEqual(await held(source, eventId));
  });

  it("reads CRLF line ends as LF ones", async () => {
    const input = freshFile("crlf.ndjson");
    const lines = readFileSync(exportFile, "utf8").trimEnd().split("\n");
    const fd = openSync(input, "w");
    writeSync(fd, lines.join("\r\n"));
    closeSync(fd);
    const target = freshFile("target.db");
    const run = gateway(["import", "--in", input], { DATABASE_URL: target });
    expect([run.status, run.stderr]).toEqual([0, ""]);
    expect(await held(target, eventId)).toEqual(await held(source, eventId));
  });
});

describe("gateway import of very long lines", { timeout: 120_000 }, () => {
  it("imports a line as long as the gateway's limits allow (16 MiB body and payload, their quotes escaped)", async () => {
    const source = freshFile("big-source.db");
    const register = new SqliteRegister(source);
    // BODY_LIMIT and WEBHOOK_BODY_LIMIT are at most 16 MiB; JSON escapes a quote as two bytes.
    const body = `{"note":"${'\\"'.repeat(8 * MiB - 8)}"}`;
    const payload = `{"note":"${'\\"'.repeat(8 * MiB - 8)}"}`;
    const paid = shopifyPaid({ sender: "default", payload });
    try {
      await register.reserve({
        sender: "default",
        eventId: paid.key,
        fingerprint: "fp-big",
        policyVersion: "test",
        body,
        ...siteOrderOf(body),
        correlationId: "c-big",
        now: Date.now(),
        source: paid,
      });
    } finally {
      await register.close();
    }
    const exportFile = freshFile("big.ndjson");
    expect(gateway(["export", "--out", exportFile], { DATABASE_URL: source }).status).toBe(0);
    // Over 64 MiB: a line this long is one the gateway writes.
    expect(statSync(exportFile).size).toBeGreaterThan(64 * MiB);
    const target = freshFile("big-target.db");
    const run = gateway(["import", "--in", exportFile], { DATABASE_URL: target });
    expect([run.status, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toMatch(/^imported 1 events/);
    const copy = new SqliteRegister(target);
    try {
      expect((await copy.find("default", paid.key))?.body).toBe(body);
      expect((await copy.sources.ofEvent("default", paid.key))?.payload).toBe(payload);
    } finally {
      await copy.close();
    }
  });

  it("refuses a line over 128 MiB by its number, after importing the lines before it, without a stack trace", async () => {
    const source = freshFile("small-source.db");
    const register = new SqliteRegister(source);
    const event = orderPaidEvent();
    try {
      await register.reserve({
        sender: "default",
        eventId: event.event_id,
        fingerprint: `fp-${event.event_id}`,
        policyVersion: "test",
        body: JSON.stringify(event),
        ...siteOrderOf(JSON.stringify(event)),
        correlationId: "c-1",
        now: Date.now(),
      });
    } finally {
      await register.close();
    }
    const exportFile = freshFile("small.ndjson");
    expect(gateway(["export", "--out", exportFile], { DATABASE_URL: source }).status).toBe(0);
    const [header, line, end] = readFileSync(exportFile, "utf8").trimEnd().split("\n");
    const input = freshFile("too-long.ndjson");
    const fd = openSync(input, "w");
    writeSync(fd, `${header}\n${line}\n{"type":"event","event":{"body":"`);
    const chunk = Buffer.alloc(MiB, "x");
    for (let written = 0; written < 128; written += 1) writeSync(fd, chunk);
    writeSync(fd, `"}}\n${end}\n`);
    closeSync(fd);
    const target = freshFile("too-long-target.db");
    const run = gateway(["import", "--in", input], { DATABASE_URL: target });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /^gateway import: line 3: longer than 128 MiB, the longest line import reads[^\n]*; nothing of it was imported\n$/,
    );
    expect(run.stdout).toMatch(/^imported 1 events into /);
    expect((await held(target, event.event_id)).status).toBe("PROCESSING");
  });
});
