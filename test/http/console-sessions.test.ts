import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { consoleCall, consoleCookieNames, hiddenField, parsedSetCookie, signInAs } from "../support/console-client.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { OPERATOR, VIEWER, writeOperatorsFile } from "../support/operators.ts";
import { tempDir } from "../support/temp.ts";

/**
 * The console's sessions and cookies against issue 22's findings 1, 4, 5 and 8,
 * over real HTTP on real gateways with their SQLite file.
 */
const ONEC_URL = "http://127.0.0.1:9/hs";
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The console's Content-Security-Policy begins so: its own headers, not a bare Node answer. */
const CONSOLE_CSP_START = "default-src 'none'";

const dir = tempDir("console-sessions-");
const started: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((gateway) => gateway.close()));
});
afterAll(() => dir.remove());

let databases = 0;
/** A fresh register file; pass it again to start a gateway "after a restart" on the same register. */
function newDatabase(): string {
  databases += 1;
  return join(dir.path, `gateway-${databases}.db`);
}

async function gateway(env: Record<string, string>): Promise<TestGateway> {
  const started_ = await startTestGateway({ ONEC_URL, DELIVERER: "off", ...env });
  started.push(started_);
  return started_;
}

async function restart(running: TestGateway, env: Record<string, string>): Promise<TestGateway> {
  await running.close();
  started.splice(started.indexOf(running), 1);
  return gateway(env);
}

function page(url: string, cookie: string, headers: Record<string, string> = {}) {
  return consoleCall(`${url}/console`, { headers: { cookie, ...headers } });
}

/** Where a signed-out page request goes: sign-in, and back to the page after. */
const SIGN_IN_AND_BACK = "/console/sign-in?next=%2Fconsole";

/** Changes the register's row of every session past the port, as time passing would. */
function ageSessions(databasePath: string, set: string): void {
  const db = new Database(databasePath);
  try {
    db.pragma("busy_timeout = 5000");
    db.prepare(`UPDATE console_sessions SET ${set}`).run();
  } finally {
    db.close();
  }
}

/** Two gateway starts and several sign-ins: more than the default 5 s on a busy machine. */
describe("finding 1: a session is bound to the credential that opened it", { timeout: 30_000 }, () => {
  it("after a token is rotated in OPERATORS_FILE and the gateway restarted, the old cookie is refused; others' sessions survive", async () => {
    const operatorsFile = writeOperatorsFile(dir.path, [OPERATOR, VIEWER], "rotating.json");
    const env = { OPERATORS_FILE: operatorsFile, DATABASE_URL: newDatabase() };
    const before = await gateway(env);
    const oleg = await signInAs(before.url, OPERATOR.token);
    const vera = await signInAs(before.url, VIEWER.token);
    expect((await page(before.url, oleg.cookie)).status).toBe(200);

    const rotated = { ...OPERATOR, token: "operator-token-of-oleg-ROTATED-987654" };
    writeOperatorsFile(dir.path, [rotated, VIEWER], "rotating.json");
    const after = await restart(before, env);

    const old = await page(after.url, oleg.cookie);
    expect(old.status).toBe(303);
    expect(old.headers.location).toBe(SIGN_IN_AND_BACK);
    // Vera's token did not change: her session outlives the restart, as sessions do.
    expect((await page(after.url, vera.cookie)).status).toBe(200);
    // The new token signs in.
    const fresh = await signInAs(after.url, rotated.token);
    expect((await page(after.url, fresh.cookie)).status).toBe(200);
  });

  it("after ADMIN_TOKEN is rotated and the gateway restarted, the old cookie is refused", async () => {
    const database = newDatabase();
    const before = await gateway({ ADMIN_TOKEN: "admin-token-before-rotation-0123", DATABASE_URL: database });
    const admin = await signInAs(before.url, "admin-token-before-rotation-0123");
    expect((await page(before.url, admin.cookie)).status).toBe(200);

    const after = await restart(before, { ADMIN_TOKEN: "admin-token-after-rotation-45678", DATABASE_URL: database });
    const old = await page(after.url, admin.cookie);
    expect(old.status).toBe(303);
    expect(old.headers.location).toBe(SIGN_IN_AND_BACK);
  });
});

describe("finding 4: an idle timeout as well as the absolute one", () => {
  it("keeps the session in a browser-session cookie: no Max-Age, no Expires", async () => {
    const gw = await gateway({ OPERATORS_FILE: writeOperatorsFile(dir.path, [OPERATOR]), DATABASE_URL: newDatabase() });
    const { answer } = await signInAs(gw.url, OPERATOR.token);
    const session = parsedSetCookie(answer, "gateway_console");
    expect(session?.attributes.has("Max-Age")).toBe(false);
    expect(session?.attributes.has("Expires")).toBe(false);
  });

  it("ends a session unused for 30 minutes (OWASP ASVS 4.0.3 V3.3.2, level 2), and tells the browser to drop its cookie", async () => {
    const gw = await gateway({ OPERATORS_FILE: writeOperatorsFile(dir.path, [OPERATOR]), DATABASE_URL: newDatabase() });
    const { cookie } = await signInAs(gw.url, OPERATOR.token);
    ageSessions(gw.databasePath, `last_used_at = last_used_at - ${30 * MINUTE - 5000}`);
    expect((await page(gw.url, cookie)).status).toBe(200);

    ageSessions(gw.databasePath, `last_used_at = last_used_at - ${30 * MINUTE}`);
    const idle = await page(gw.url, cookie);
    expect(idle.status).toBe(303);
    expect(idle.headers.location).toBe(SIGN_IN_AND_BACK);
    expect(parsedSetCookie(idle, "gateway_console")?.attributes.get("Max-Age")).toBe("0");
  });

  it("ends a session 8 hours after sign-in however busy it is", async () => {
    const gw = await gateway({ OPERATORS_FILE: writeOperatorsFile(dir.path, [OPERATOR]), DATABASE_URL: newDatabase() });
    const { cookie } = await signInAs(gw.url, OPERATOR.token);
    ageSessions(
      gw.databasePath,
      `created_at = created_at - ${8 * HOUR - 5000}, expires_at = expires_at - ${8 * HOUR - 5000}`,
    );
    expect((await page(gw.url, cookie)).status).toBe(200);

    ageSessions(gw.databasePath, `created_at = created_at - 5000, expires_at = expires_at - 5000`);
    const ended = await page(gw.url, cookie);
    expect(ended.status).toBe(303);
    expect(ended.headers.location).toBe(SIGN_IN_AND_BACK);
  });

  it("takes both timeouts from CONSOLE_SESSION_IDLE_MS and CONSOLE_SESSION_MAX_MS", async () => {
    const gw = await gateway({
      OPERATORS_FILE: writeOperatorsFile(dir.path, [OPERATOR]),
      DATABASE_URL: newDatabase(),
      CONSOLE_SESSION_IDLE_MS: String(10 * MINUTE),
      CONSOLE_SESSION_MAX_MS: String(2 * HOUR),
    });
    await signInAs(gw.url, OPERATOR.token);
    const db = new Database(gw.databasePath, { readonly: true });
    try {
      const row = db.prepare("SELECT idle_ms, expires_at - created_at AS max_ms FROM console_sessions").get();
      expect(row).toEqual({ idle_ms: 10 * MINUTE, max_ms: 2 * HOUR });
    } finally {
      db.close();
    }
  });
});

describe("finding 5: a sign-in's next with characters a Location header cannot carry", () => {
  it("goes to the page percent-encoded, with the console's headers, not a raw 500", async () => {
    const gw = await gateway({ OPERATORS_FILE: writeOperatorsFile(dir.path, [OPERATOR]), DATABASE_URL: newDatabase() });
    const { answer } = await signInAs(gw.url, OPERATOR.token, { next: "/console/Ж?q=Ж" }).catch((error: Error) => {
      throw new Error(`POST /console/sign-in with next=/console/Ж: ${error.message}`);
    });
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe("/console/%D0%96?q=%D0%96");
    expect(answer.headers["content-security-policy"]).toMatch(new RegExp(`^${CONSOLE_CSP_START}`));

    // The form carries it as it will be used.
    const form = await consoleCall(`${gw.url}/console/sign-in?next=${encodeURIComponent("/console/Ж")}`);
    expect(form.status).toBe(200);
    expect(hiddenField(form.text, "next")).toBe("/console/%D0%96");
  });
});

describe("finding 8: cookies", () => {
  const OVER_TLS = { TRUST_PROXY: "127.0.0.1" };

  it("over TLS are named __Host-, with Path=/, Secure and no Domain (RFC 6265bis §4.1.3.2)", async () => {
    const gw = await gateway({
      OPERATORS_FILE: writeOperatorsFile(dir.path, [OPERATOR]),
      DATABASE_URL: newDatabase(),
      ...OVER_TLS,
    });
    const proxied = { "x-forwarded-proto": "https", origin: `https://${new URL(gw.url).host}` };
    const names = consoleCookieNames(true);
    const form = await consoleCall(`${gw.url}/console/sign-in`, { headers: proxied });
    const { answer, cookie } = await signInAs(gw.url, OPERATOR.token, { headers: proxied, overTls: true });
    const lines = [...form.setCookies, ...answer.setCookies];
    expect(lines.length).toBe(3);
    for (const line of lines) expect(line, line).toMatch(/^__Host-/);
    for (const set of [
      parsedSetCookie(form, names.signIn),
      parsedSetCookie(answer, names.signIn),
      parsedSetCookie(answer, names.session),
    ]) {
      expect(set?.attributes.get("Path"), set?.name).toBe("/");
      expect(set?.attributes.has("Secure"), set?.name).toBe(true);
      expect(set?.attributes.has("Domain"), set?.name).toBe(false);
      expect(set?.attributes.has("HttpOnly"), set?.name).toBe(true);
      expect(set?.attributes.get("SameSite"), set?.name).toBe("Strict");
    }
    expect(parsedSetCookie(answer, names.session)?.attributes.has("Max-Age")).toBe(false);
    expect((await page(gw.url, cookie, proxied)).status).toBe(200);
    // Path=/ sends the session cookie to the API as well: the API reads bearer tokens only, never a cookie.
    const api = await consoleCall(`${gw.url}/integration/v1/admin/events`, { headers: { cookie, ...proxied } });
    expect(api.status).toBe(401);
  });

  it("GET /console/sign-in does not send back a sign-in cookie it did not make", async () => {
    const gw = await gateway({ OPERATORS_FILE: writeOperatorsFile(dir.path, [OPERATOR]), DATABASE_URL: newDatabase() });
    const hostile = 'x"><script>alert(1)</script>';
    const form = await consoleCall(`${gw.url}/console/sign-in`, {
      headers: { cookie: `gateway_console_sign_in=${hostile}` },
    });
    expect(form.status).toBe(200);
    const issued = parsedSetCookie(form, "gateway_console_sign_in")?.value;
    expect(issued).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(form.setCookies.join("\n")).not.toContain("script");
    expect(hiddenField(form.text, "csrf")).toBe(issued);

    // One it made is kept, so a second tab's form stays valid.
    const again = await consoleCall(`${gw.url}/console/sign-in`, {
      headers: { cookie: `gateway_console_sign_in=${issued}` },
    });
    expect(parsedSetCookie(again, "gateway_console_sign_in")?.value).toBe(issued);
  });

  it("a session cookie sent twice (one planted) opens nothing", async () => {
    const gw = await gateway({ OPERATORS_FILE: writeOperatorsFile(dir.path, [OPERATOR]), DATABASE_URL: newDatabase() });
    const { cookie } = await signInAs(gw.url, OPERATOR.token);
    const planted = `gateway_console=${"A".repeat(43)}`;
    for (const header of [`${planted}; ${cookie}`, `${cookie}; ${planted}`]) {
      const answer = await page(gw.url, header);
      expect(answer.status, header).toBe(303);
    }
  });
});
