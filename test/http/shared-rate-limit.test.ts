import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { migrateDatabase } from "../../src/register/postgres/migrate.ts";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { call, postEvent } from "../support/http.ts";
import { postgresForTests, type TestDatabase, truncateRegister } from "../support/postgres.ts";
import { tcpProxy } from "../support/tcp-proxy.ts";

/**
 * The issue: "With PostgreSQL, make it shared across instances … Users would
 * expect shared." A sender's RATE_LIMIT_MAX holds for the sender however a
 * load balancer spreads its requests, counted in one window on the database.
 */
const pg = postgresForTests();
const SHOP_A = "token-of-shop-a-0123456789";
const SHOP_B = "token-of-shop-b-0123456789";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe.skipIf(!pg.enabled)("rate limit shared by gateways on one PostgreSQL database", { timeout: 30_000 }, () => {
  let db: TestDatabase;
  let onec: OnecEmulator;
  const gateways: TestGateway[] = [];

  async function gateway(max: number, databaseUrl = db.url, windowMs = 60_000): Promise<TestGateway> {
    const started = await startTestGateway({
      ONEC_URL: onec.url,
      DATABASE_URL: databaseUrl,
      SENDER_TOKENS: `shop-a:${SHOP_A},shop-b:${SHOP_B}`,
      ALLOW_ANONYMOUS: "false",
      RATE_LIMIT_MAX: String(max),
      RATE_LIMIT_WINDOW_MS: String(windowMs),
      SYNC_WAIT_MS: "0",
      DELIVERER: "off",
    });
    gateways.push(started);
    return started;
  }

  beforeAll(async () => {
    onec = await startOnecEmulator();
    const created = await pg.database();
    if (created === undefined) return;
    db = created;
    await migrateDatabase(db.url);
  });
  beforeEach(async () => {
    pg.require();
    await truncateRegister(db.sql);
    await db.sql`TRUNCATE rate_limit_windows`;
  });
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((g) => g.close()));
  });
  afterAll(async () => {
    await db?.drop();
    await onec?.close();
  });

  it("counts a sender's requests to every instance into one limit, atomically under 50 at once", async () => {
    const instances = [await gateway(20), await gateway(20), await gateway(20)];
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        postEvent((instances[i % 3] as TestGateway).url, orderPaidEvent(), bearer(SHOP_A)),
      ),
    );
    const counted = new Map<number, number>();
    for (const { status } of answers) counted.set(status, (counted.get(status) ?? 0) + 1);
    expect(Object.fromEntries(counted)).toEqual({ 202: 20, 429: 30 });
    // Every instance refuses once the sender's shared window is spent; another sender is untouched.
    for (const instance of instances) {
      const refused = await postEvent(instance.url, orderPaidEvent(), bearer(SHOP_A));
      expect(refused.status).toBe(429);
      expect(refused.headers["x-ratelimit-limit"]).toBe("20");
      expect(refused.headers["x-ratelimit-remaining"]).toBe("0");
      const retryAfter = Number(refused.headers["retry-after"]);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.json()).toMatchObject({ type: "/integration/v1/problems/rate-limited", retryable: true });
    }
    expect((await postEvent((instances[0] as TestGateway).url, orderPaidEvent(), bearer(SHOP_B))).status).toBe(202);
  });

  it("opens a new window after the last one ended, at the first request after it", async () => {
    const [a, b] = [await gateway(2, db.url, 1000), await gateway(2, db.url, 1000)];
    expect((await postEvent(a.url, orderPaidEvent(), bearer(SHOP_A))).status).toBe(202);
    expect((await postEvent(b.url, orderPaidEvent(), bearer(SHOP_A))).status).toBe(202);
    const refused = await postEvent(a.url, orderPaidEvent(), bearer(SHOP_A));
    expect(refused.status).toBe(429);
    // The window's end, as the answer tells it: wait for that moment, as a sender would.
    const resetSeconds = Number(refused.headers["x-ratelimit-reset"]);
    expect(resetSeconds).toBeGreaterThanOrEqual(0);
    expect(resetSeconds).toBeLessThanOrEqual(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await postEvent(b.url, orderPaidEvent(), bearer(SHOP_A))).status).toBe(202);
  });

  it("steps aside while the database is unreachable: the answer is the register's 503, never a 500", async () => {
    const proxy = await tcpProxy(new URL(db.url));
    const instance = await gateway(5, proxy.url);
    const accepted = await postEvent(instance.url, orderPaidEvent(), bearer(SHOP_A));
    expect(accepted.status).toBe(202);
    await proxy.cut();
    const during = await postEvent(instance.url, orderPaidEvent(), bearer(SHOP_A));
    expect(during.status).toBe(503);
    expect(Number(during.headers["retry-after"])).toBeGreaterThan(0);
    // docs/operations.md, "When PostgreSQL is down": status URLs get the same 503, and /readyz says 503.
    const status = await call(`${instance.url}${accepted.headers.location}`, { headers: bearer(SHOP_A) });
    expect(status.status).toBe(503);
    expect(Number(status.headers["retry-after"])).toBeGreaterThan(0);
    expect((await call(`${instance.url}/readyz`)).status).toBe(503);
    await proxy.restore();
    // Issue 25: the first 2xx within 1 s of the database taking connections again, resending as a shop does.
    const restored = Date.now();
    const event = orderPaidEvent();
    let after = await postEvent(instance.url, event, bearer(SHOP_A));
    while (after.status === 503 && Date.now() - restored < 1000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await postEvent(instance.url, event, bearer(SHOP_A));
    }
    expect(after.status).toBe(202);
    expect(Date.now() - restored).toBeLessThan(1000);
  });
});
