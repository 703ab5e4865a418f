import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EventStatus } from "../../src/domain/event-status.ts";
import { setOnecFaults } from "../soak/onec-control.ts";
import type { RegisterReader, RegisterRow } from "../soak/register.ts";
import { openRegisterReader } from "../soak/register-readers.ts";
import { orderPaidEvent } from "../support/events.ts";
import { call, type HttpAnswer, postEvent } from "../support/http.ts";
import { postgresForTests, type TestDatabase } from "../support/postgres.ts";
import { tempDir } from "../support/temp.ts";
import { answerMapDepartures } from "./answer-map.ts";
import { Balancer } from "./balancer.ts";
import { type Cluster, LEASE_MS, type Restart, startCluster } from "./cluster.ts";
import { onecAccounts } from "./onec-side.ts";
import { pollUntil } from "./poll.ts";
import { finishedRows, leasesHeldBy } from "./register-view.ts";
import { startShopLoad } from "./shop-load.ts";

/**
 * The issue's multi-instance test on PostgreSQL: three `npm start` gateways
 * with DELIVERER=off, two `gateway worker`s and the 1C emulator, every one a
 * real process on 127.0.0.1, sharing one fresh database. What counts is
 * judged at 1C's side (the emulator's orders and its journal) and in the
 * register, never from the gateways' answers alone.
 */

const pg = postgresForTests();

/** How long the register may take to settle a batch once 1C answers promptly. */
const SETTLE_MS = 30_000;

/**
 * As the answer map tells a shop to: a 503 (the register cannot take it now; issue 25 bounds the wait for
 * a PostgreSQL connection at 1 s, so 900 requests at once on a busy machine can meet it) is sent again,
 * the same bytes under the same event_id, after its Retry-After. The final answer is what counts.
 */
async function postUntilTaken(url: string, body: string): Promise<{ answer: HttpAnswer; refused: number }> {
  for (let refused = 0; ; refused++) {
    const answer = await postEvent(url, body);
    if (answer.status !== 503 || refused === 10) return { answer, refused };
    await new Promise((resolve) => setTimeout(resolve, Number(answer.headers["retry-after"] ?? "1") * 1000));
  }
}

describe.skipIf(!pg.enabled)("three gateways and two workers on one PostgreSQL register", { timeout: 120_000 }, () => {
  let logs: { path: string; remove: () => void } | undefined;
  let database: TestDatabase | undefined;
  let cluster: Cluster;
  let register: RegisterReader;

  beforeAll(async () => {
    database = await pg.database();
    // Under PG_REQUIRED=1 without a server there is nothing to start: each test then fails on its own.
    if (database === undefined) return;
    logs = tempDir("gateway-cluster-");
    cluster = await startCluster(database.url, logs.path);
    register = openRegisterReader({ kind: "postgres", url: database.url });
  }, 120_000);
  beforeEach(() => pg.require());
  afterAll(async () => {
    await register?.close();
    await cluster?.stop();
    await database?.drop();
    logs?.remove();
  });

  /** Each event ended SUCCEEDED, and 1C holds exactly one order for it, the one the register names. */
  async function expectOneOrderEach(rows: Map<string, RegisterRow>, eventIds: readonly string[]): Promise<void> {
    const accounts = await onecAccounts(cluster.onecUrl, cluster.journal, eventIds);
    const wrong = eventIds.flatMap((id) => {
      const row = rows.get(id);
      const onec = accounts.get(id);
      const ok =
        row?.status === EventStatus.SUCCEEDED &&
        onec?.orders === 1 &&
        onec.journalled === 1 &&
        onec.orderId === row.orderId;
      return ok ? [] : [{ id, register: row?.status, orderId: row?.orderId, onec }];
    });
    expect(wrong).toEqual([]);
  }

  it("50 concurrent copies of one event over the three gateways: one 1C order", async () => {
    const event = orderPaidEvent();
    const body = JSON.stringify(event);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => postEvent(cluster.gatewayUrls[i % cluster.gatewayUrls.length] ?? "", body)),
    );

    expect(answerMapDepartures(event.event_id, answers)).toEqual([]);
    const rows = await finishedRows(register, [event.event_id], SETTLE_MS);
    expect(rows.get(event.event_id)).toMatchObject({ status: EventStatus.SUCCEEDED, attempts: 1, finishedAttempts: 1 });
    await expectOneOrderEach(rows, [event.event_id]);
    const finished = answers.find((answer) => answer.status === 200 || answer.status === 201);
    if (finished !== undefined) expect(finished.json().order).toMatchObject({ id: rows.get(event.event_id)?.orderId });
    console.log(`50 copies: ${tally(answers)}`);
  });

  it("300 events, each sent to all three gateways at once: each recorded and created in 1C exactly once", async () => {
    const events = Array.from({ length: 300 }, () => orderPaidEvent());
    const started = Date.now();
    const answeredAfter: number[] = [];
    let refused = 0;
    const copies = await Promise.all(
      events.map((event) => {
        const body = JSON.stringify(event);
        return Promise.all(
          cluster.gatewayUrls.map(async (url) => {
            const sent = await postUntilTaken(url, body);
            answeredAfter.push(Date.now() - started);
            refused += sent.refused;
            return sent.answer;
          }),
        );
      }),
    );
    answeredAfter.sort((a, b) => a - b);

    expect(events.flatMap((event, i) => answerMapDepartures(event.event_id, copies[i] ?? []))).toEqual([]);
    const eventIds = events.map((event) => event.event_id);
    const rows = await finishedRows(register, eventIds, SETTLE_MS);
    const settledMs = Date.now() - started;
    expect(eventIds.filter((id) => rows.get(id)?.attempts !== 1)).toEqual([]);
    await expectOneOrderEach(rows, eventIds);
    console.log(
      `300 events × 3 gateways: ${tally(copies.flat())} (${refused} 503s sent again); answers after ${answeredAfter[450]} ms (median), ${answeredAfter.at(-1)} ms (last); all delivered after ${settledMs} ms`,
    );
  });

  it("kill -9 of a worker mid-call: the other one delivers its events after the lease, none twice", async () => {
    const [victim, survivor] = cluster.workers;
    if (victim === undefined || survivor === undefined || database === undefined)
      throw new Error("cluster not started");
    // Slow, not failing: each call outlasts the poll that finds its lease and the kill that follows, and still
    // ends well within ONEC_TIMEOUT_MS.
    await setOnecFaults(cluster.onecUrl, { latencyMs: 1200 });
    try {
      const events = Array.from({ length: 12 }, () => orderPaidEvent());
      const eventIds = events.map((event) => event.event_id);
      const answers = Promise.all(
        events.map((event, i) => postEvent(cluster.gatewayUrls[i % cluster.gatewayUrls.length] ?? "", event)),
      );
      const sql = database.sql;
      await pollUntil(
        "the worker to be killed holds delivery leases",
        async () => {
          const held = await leasesHeldBy(sql, victim.owner);
          return held.length > 0 ? held : undefined;
        },
        15_000,
      );
      await victim.process.stop("SIGKILL");
      const killedAt = Date.now();
      expect(victim.process.child.signalCode).toBe("SIGKILL");
      // Nobody may claim them before the lease runs out, so this is what the dead worker had in flight.
      const cut = await leasesHeldBy(sql, victim.owner);
      expect(cut.length).toBeGreaterThan(0);

      const rows = await finishedRows(register, eventIds, LEASE_MS + SETTLE_MS);
      const takenOverMs = Date.now() - killedAt;
      const answered = await answers;
      expect(events.flatMap((event, i) => answerMapDepartures(event.event_id, answered.slice(i, i + 1)))).toEqual([]);
      await expectOneOrderEach(rows, eventIds);

      const cutIds = new Set(cut.map((lease) => lease.eventId));
      expect(eventIds.filter((id) => !cutIds.has(id) && rows.get(id)?.attempts !== 1)).toEqual([]);
      for (const lease of cut) {
        expect(rows.get(lease.eventId), lease.eventId).toMatchObject({ attempts: 2, finishedAttempts: 1 });
        const history = await call(`${cluster.gatewayUrls[0]}/integration/v1/orders/paid/${lease.eventId}/attempts`);
        const [first, second] = (history.json() as { attempts: AttemptLine[] }).attempts;
        expect(first, lease.eventId).toMatchObject({ attempt: 1, worker: victim.owner, outcome: "unfinished" });
        expect(second, lease.eventId).toMatchObject({ attempt: 2, worker: survivor.owner, outcome: "delivered" });
        // Taken over only once the dead worker's lease had run out.
        expect(Date.parse(second?.started_at ?? "")).toBeGreaterThanOrEqual(lease.until);
      }
      console.log(
        `kill -9: ${cut.length} of 12 events were in flight in the killed worker; all 12 delivered ${takenOverMs} ms after the kill (lease ${LEASE_MS} ms)`,
      );
    } finally {
      await setOnecFaults(cluster.onecUrl, { latencyMs: 0 });
      // The deployment runs two workers again for what follows, whether this test passed or not (a
      // worker still running is stopped with SIGTERM first).
      await cluster.replaceWorker(0);
    }
  });

  // Three stops and starts, each start about 2 s on a quiet machine but far longer when other files load its cores.
  it("rolling restart of the gateways under load: no 5xx, nothing acknowledged is lost", {
    timeout: 240_000,
  }, async () => {
    const balancer = new Balancer(cluster.gatewayUrls, 100);
    balancer.start();
    const load = startShopLoad(balancer, 4);
    await pollUntil(
      "the shop's traffic flowing",
      async () => (load.acknowledgedCount() >= 50 ? true : undefined),
      30_000,
    );
    // The shop stops before any failure of the restarts is reported, so that no sender is left running.
    const outcome = await restartOneByOne(cluster, balancer).then(
      (restarts) => ({ restarts }),
      (error: unknown) => ({ error }),
    );
    const shop = await load.stop();
    await balancer.close();
    if ("error" in outcome) throw outcome.error;
    const { restarts } = outcome;
    for (const r of restarts) {
      console.log(
        `restart of ${r.url}: exit ${r.exitCode} ${r.exitedAt - r.stoppingAt} ms after SIGTERM, successor ready after ${r.readyAt - r.exitedAt} ms`,
      );
    }
    console.log(
      `rolling restart: ${shop.acknowledged.length} events acknowledged, answers ${JSON.stringify(shop.statuses)}, ${balancer.refusedAndPassedOn} refused connections passed to the next gateway, ${shop.broken.length} broken after sending`,
    );

    expect(restarts.map((r) => r.exitCode)).toEqual([0, 0, 0]);
    expect(shop.unacknowledged).toEqual([]);
    expect(shop.departures).toEqual([]);
    const rows = await finishedRows(register, shop.acknowledged, SETTLE_MS);
    await expectOneOrderEach(rows, shop.acknowledged);
    // No worker died: every attempt started also finished.
    expect(shop.acknowledged.filter((id) => rows.get(id)?.attempts !== rows.get(id)?.finishedAttempts)).toEqual([]);
    // Last, so that a failure here comes after "nothing lost" has been checked.
    expect(shop.serverErrors.map((a) => `${a.status} ${whenSent(a, restarts)}: ${a.text}`)).toEqual([]);
    // A balancer does not resend a POST it has sent (nginx, HAProxy defaults): the shop would get its 502.
    expect(shop.broken.map((b) => `${b.code} ${whenSent(b, restarts)}`)).toEqual([]);
  });
});

/**
 * SIGTERM to each gateway in turn, its successor on the same port, and on to
 * the next only once the balancer sends the new one traffic again.
 */
async function restartOneByOne(cluster: Cluster, balancer: Balancer): Promise<Restart[]> {
  const restarts: Restart[] = [];
  for (let slot = 0; slot < cluster.gatewayUrls.length; slot++) {
    const restart = await cluster.restartGateway(slot);
    restarts.push(restart);
    const before = balancer.answeredBy(restart.url);
    await pollUntil(
      `${restart.url} in the balancer's rotation again after its restart`,
      async () => (balancer.answeredBy(restart.url) > before + 20 ? true : undefined),
      30_000,
    );
  }
  return restarts;
}

/** "from http://…: sent 12 ms after its SIGTERM, 80 ms before it exited". */
function whenSent(request: { upstream: string; sentAt: number }, restarts: readonly Restart[]): string {
  const restart = restarts.find(
    (r) => r.url === request.upstream && request.sentAt >= r.stoppingAt - 1000 && request.sentAt <= r.readyAt,
  );
  const when =
    restart === undefined
      ? "not during its restart"
      : `sent ${request.sentAt - restart.stoppingAt} ms after its SIGTERM, ${restart.exitedAt - request.sentAt} ms before it exited`;
  return `from ${request.upstream}: ${when}`;
}

interface AttemptLine {
  attempt: number;
  worker: string;
  outcome: string;
  started_at: string;
}

/** "201 ×1, 200 ×30, 202 ×19". */
function tally(answers: readonly HttpAnswer[]): string {
  const counts = new Map<number, number>();
  for (const answer of answers) counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status} ×${n}`)
    .join(", ");
}
