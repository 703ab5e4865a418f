import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { call, postEvent } from "../support/http.ts";
import { gatewayProcesses } from "../support/process.ts";

/**
 * README: with SHUTDOWN_DELAY_MS, a SIGTERM first makes /readyz answer 503
 * while every other request is served as before, so a load balancer's health
 * checks take the instance out before it stops listening; then it stops as
 * without the delay. A balancer that sends a request in that window gets a
 * real answer, never the shutting-down 503.
 */
const DRAIN_MS = 2000;

describe("SIGTERM with SHUTDOWN_DELAY_MS: not ready first, serving until the drain ends", { timeout: 40_000 }, () => {
  const h = gatewayProcesses();

  it("answers /readyz 503 at once, keeps accepting events for the drain, then exits", async () => {
    const gateway = await h.start({
      ONEC_URL: h.onec.url,
      DATABASE_URL: h.databasePath("drain.db"),
      SHUTDOWN_DELAY_MS: String(DRAIN_MS),
    });
    expect((await call(`${gateway.url}/readyz`)).status).toBe(200);

    const exited = once(gateway.child, "exit");
    const signalledAt = Date.now();
    gateway.child.kill("SIGTERM");
    // The signal is handled asynchronously: wait for the first not-ready answer.
    let readiness = await call(`${gateway.url}/readyz`);
    while (readiness.status === 200 && Date.now() - signalledAt < DRAIN_MS / 2) {
      readiness = await call(`${gateway.url}/readyz`);
    }
    expect(readiness.status).toBe(503);
    expect(readiness.json()).toMatchObject({ type: "/integration/v1/problems/shutting-down" });
    expect(Number(readiness.headers["retry-after"])).toBeGreaterThan(0);

    const during = await Promise.all(Array.from({ length: 20 }, () => postEvent(gateway.url, orderPaidEvent())));
    expect(Date.now() - signalledAt).toBeLessThan(DRAIN_MS);
    expect(during.map((answer) => answer.status).filter((status) => status !== 201)).toEqual([]);
    // A balancer's kept-alive connection is told to end after each answer, not cut under a request later.
    expect(during.map((answer) => answer.headers.connection)).toEqual(during.map(() => "close"));
    expect((await call(`${gateway.url}/healthz`)).status).toBe(200);

    await exited;
    const stoppedAfter = Date.now() - signalledAt;
    expect(stoppedAfter).toBeGreaterThanOrEqual(DRAIN_MS);
    expect(stoppedAfter).toBeLessThan(DRAIN_MS + 10_000);
    expect(gateway.child.exitCode).toBe(0);
  });
});
