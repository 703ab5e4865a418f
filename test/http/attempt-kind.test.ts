import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { type AheadAttempts, aheadAttempts } from "../support/ahead-attempts.ts";
import { signInAs } from "../support/console-client.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { call } from "../support/http.ts";
import { ADMIN, VIEWER, writeOperatorsFile } from "../support/operators.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Issue: how each attempt was claimed (src/register/port.ts, AttemptKind)
 * is kept in the register but shown nowhere. The status URL's attempts, the
 * admin API's event, the OpenAPI document and the console's event page must
 * each say it: "just_in_time" or "ahead".
 */

const dir = tempDir("attempt-kind-http-");
let onec: OnecEmulator;
let gw: TestGateway;
let fixture: AheadAttempts;

beforeAll(async () => {
  const file = join(dir.path, "gateway.db");
  const register = new SqliteRegister(file);
  try {
    fixture = await aheadAttempts(register);
  } finally {
    await register.close();
  }
  onec = await startOnecEmulator();
  gw = await startTestGateway({
    ONEC_URL: onec.url,
    DATABASE_URL: file,
    OPERATORS_FILE: writeOperatorsFile(dir.path, [VIEWER, ADMIN]),
  });
});
afterAll(async () => {
  await gw?.close();
  await onec?.close();
  dir.remove();
});

/** The lost event's attempts as every view must show them: the ahead claim that died, then the one that delivered. */
const LOST_KINDS = [
  [1, "ahead"],
  [2, "just_in_time"],
];

type AttemptBody = { attempt: number; kind: unknown };

/** The part of the OpenAPI document read here. */
interface OpenApiDocument {
  components: {
    schemas: Record<
      string,
      { required: string[]; properties: Record<string, { enum?: string[]; description?: string }> } | undefined
    >;
  };
}

describe("the attempt views", () => {
  it("GET {status_url}/attempts says how each attempt was claimed", async () => {
    const answer = await call(`${gw.url}/integration/v1/orders/paid/${fixture.lost}/attempts`);
    expect(answer.status).toBe(200);
    const attempts = answer.json().attempts as AttemptBody[];
    expect(attempts.map((a) => [a.attempt, a.kind])).toEqual(LOST_KINDS);
  });

  it("GET /integration/v1/admin/events/{event_id} says it too", async () => {
    const answer = await call(`${gw.url}/integration/v1/admin/events/${fixture.ready}`, {
      headers: { authorization: `Bearer ${ADMIN.token}` },
    });
    expect(answer.status).toBe(200);
    const attempts = answer.json().attempts as AttemptBody[];
    expect(attempts.map((a) => [a.attempt, a.kind])).toEqual([[1, "ahead"]]);
  });

  it("are described in the OpenAPI document: kind is required, one of its two values, explained", async () => {
    const answer = await call(`${gw.url}/openapi.json`);
    expect(answer.status).toBe(200);
    const document = JSON.parse(answer.text) as OpenApiDocument;
    const view = document.components.schemas.AttemptView;
    expect(view?.required).toContain("kind");
    expect([...(view?.properties.kind?.enum ?? [])].sort()).toEqual(["ahead", "just_in_time"]);
    expect(view?.properties.kind?.description).toMatch(/ahead/);
    // The document names exactly the fields the gateway sends.
    const sent = (await call(`${gw.url}/integration/v1/orders/paid/${fixture.lost}/attempts`)).json()
      .attempts as AttemptBody[];
    expect(Object.keys(sent[0] ?? {}).sort()).toEqual(Object.keys(view?.properties ?? {}).sort());
  });
});

/** The console's attempts table: its header cells, and each row's cells as text. */
function attemptsTable(page: string): { header: string[]; rows: string[][] } {
  const table = /<table class="attempts">([\s\S]*?)<\/table>/.exec(page)?.[1];
  if (table === undefined) throw new Error("no attempts table on the page");
  const cells = (row: string, tag: "th" | "td") =>
    [...row.matchAll(new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, "g"))].map((m) => (m[1] ?? "").trim());
  const rows = [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1] ?? "");
  return { header: cells(rows[0] ?? "", "th"), rows: rows.slice(1).map((row) => cells(row, "td")) };
}

describe("the console's event page", () => {
  it("shows how each attempt was claimed, in a column of its own", async () => {
    const { cookie } = await signInAs(gw.url, VIEWER.token);
    const answer = await call(`${gw.url}/console/events/default/${fixture.lost}`, { headers: { cookie } });
    expect(answer.status).toBe(200);
    const { header, rows } = attemptsTable(answer.text);
    const column = header.findIndex((text) => /claimed/i.test(text));
    expect(column).toBeGreaterThanOrEqual(0);
    expect(rows.map((row) => [Number(row[0]), row[column]])).toEqual([
      [1, "ahead"],
      [2, "just in time"],
    ]);
  });
});
