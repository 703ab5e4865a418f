import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import { OPERATOR, VIEWER, writeOperatorsFile } from "../support/operators.ts";
import { tempDir } from "../support/temp.ts";
import { gateway, TestDatabase } from "./cli-support.ts";

const files = tempDir("gateway-cli-roles-");
afterAll(() => files.remove());
const OPERATORS_FILE = writeOperatorsFile(files.path, [VIEWER, OPERATOR]);

/** A token file as `echo "$TOKEN" > file` writes it: with its newline. */
function tokenFile(name: string, token: string): string {
  const path = join(files.path, name);
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  return path;
}

describe("gateway replay with OPERATORS_FILE: run under someone's token", { timeout: 60_000 }, () => {
  let db: TestDatabase;
  let env: Record<string, string>;

  beforeEach(() => {
    db = new TestDatabase();
    env = { ...db.env, OPERATORS_FILE, GATEWAY_TOKEN: "" };
  });
  afterEach(async () => {
    await db.remove();
  });

  it("records the replay under the name of the operator whose token is in GATEWAY_TOKEN", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const run = gateway(["replay", eventId, "--reason", "SKU added in 1C"], { ...env, GATEWAY_TOKEN: OPERATOR.token });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(
      `${eventId}: FAILED_FINAL → PROCESSING (replay by ${OPERATOR.name}: SKU added in 1C)`,
    );
    expect(db.replays(eventId)).toEqual([
      { requested_by: OPERATOR.name, reason: "SKU added in 1C", forced: 0, from_status: EventStatus.FAILED_FINAL },
    ]);
  });

  it("reads the token from --token-file just as well", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const file = tokenFile("oleg.token", OPERATOR.token);
    const run = gateway(["replay", eventId, "--reason", "retry", "--token-file", file], env);
    expect(run.status).toBe(0);
    expect(db.replays(eventId)[0]?.requested_by).toBe(OPERATOR.name);
  });

  it("reads the token from GATEWAY_TOKEN_FILE, as every secret may be given (docs/security.md: secrets)", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const file = tokenFile("oleg-env.token", OPERATOR.token);
    const run = gateway(["replay", eventId, "--reason", "retry"], { ...env, GATEWAY_TOKEN_FILE: file });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(db.replays(eventId)[0]?.requested_by).toBe(OPERATOR.name);
  });

  it("refuses GATEWAY_TOKEN and GATEWAY_TOKEN_FILE both set, with exit 1, and replays nothing", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const file = tokenFile("both.token", OPERATOR.token);
    const run = gateway(["replay", eventId, "--reason", "retry"], {
      ...env,
      GATEWAY_TOKEN: OPERATOR.token,
      GATEWAY_TOKEN_FILE: file,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/GATEWAY_TOKEN and GATEWAY_TOKEN_FILE are both set/);
    expect(run.stderr).not.toContain(OPERATOR.token.slice(0, 6));
    expect(db.replays(eventId)).toEqual([]);
  });

  it("refuses a viewer's token with exit 1 and one line naming the viewer, and replays nothing", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const run = gateway(["replay", eventId, "--reason", "let me try"], { ...env, GATEWAY_TOKEN: VIEWER.token });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^gateway replay: ${VIEWER.name} is a viewer\\b.*\\boperator\\b`));
    expect(db.replays(eventId)).toEqual([]);
    expect((await db.find(eventId))?.status).toBe(EventStatus.FAILED_FINAL);
  });

  it("refuses, with exit 1, no token at all and a token that is nobody's", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const none = gateway(["replay", eventId, "--reason", "x"], env);
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/GATEWAY_TOKEN/);
    const unknown = gateway(["replay", eventId, "--reason", "x"], {
      ...env,
      GATEWAY_TOKEN: "nobody-has-this-0123456789",
    });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/belongs to no one in OPERATORS_FILE/);
    expect(db.replays(eventId)).toEqual([]);
  });

  it("refuses --by naming someone else (exit 2): the audit names the token's owner", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    const run = gateway(["replay", eventId, "--reason", "x", "--by", "anna"], {
      ...env,
      GATEWAY_TOKEN: OPERATOR.token,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--by "anna" names someone else/);
    expect(db.replays(eventId)).toEqual([]);
  });

  it("bulk: replays every match under the operator's name; a viewer replays none", async () => {
    const failed = [await db.failedFinal(), await db.failedFinal()];
    await db.close();
    const bulk = ["replay", "--status", "FAILED_FINAL", "--reason", "1C fixed", "--rate", "1000"];
    const refused = gateway(bulk, { ...env, GATEWAY_TOKEN: VIEWER.token });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`^gateway replay: ${VIEWER.name} is a viewer\\b`));
    for (const id of failed) expect(db.replays(id)).toEqual([]);

    const run = gateway(bulk, { ...env, GATEWAY_TOKEN: OPERATOR.token });
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split("\n")).toEqual([
      ...failed.map((id) => `${id}: FAILED_FINAL → PROCESSING (replay by ${OPERATOR.name}: 1C fixed)`),
      "replayed 2, refused 0",
    ]);
    for (const id of failed) expect(db.replays(id).map((row) => row.requested_by)).toEqual([OPERATOR.name]);
  });

  it("needs no token to read: list, status and a bulk --dry-run", async () => {
    const eventId = await db.failedFinal();
    await db.close();
    expect(gateway(["list", "--status", "FAILED_FINAL"], env).status).toBe(0);
    expect(gateway(["status", eventId], env).status).toBe(0);
    const dry = gateway(["replay", "--status", "FAILED_FINAL", "--reason", "preview", "--dry-run"], env);
    expect(dry.status).toBe(0);
    expect(dry.stdout).toMatch(/dry run: would replay 1, nothing changed/);
    expect(db.replays(eventId)).toEqual([]);
  });
});

describe("gateway replay without OPERATORS_FILE", { timeout: 60_000 }, () => {
  it("refuses --token-file, which it could check against nothing (exit 2)", async () => {
    const db = new TestDatabase();
    try {
      const eventId = await db.failedFinal();
      await db.close();
      const run = gateway(["replay", eventId, "--reason", "x", "--token-file", tokenFile("t", OPERATOR.token)], db.env);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/--token-file needs OPERATORS_FILE/);
      expect(db.replays(eventId)).toEqual([]);
    } finally {
      await db.remove();
    }
  });
});
