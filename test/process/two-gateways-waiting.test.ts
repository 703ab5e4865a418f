import { request } from "undici";
import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { postEvent } from "../support/http.ts";
import { ordersFor, ordersOf } from "../support/orders.ts";
import { gatewayPairOn, processBackends } from "../support/process-backends.ts";

const SYNC_WAIT_MS = 3000;
/** The bound: every waiting request is answered within the sync wait plus 2 s. */
const ANSWER_BOUND_MS = SYNC_WAIT_MS + 2000;
/**
 * Issue 8, part 2: with two processes, a request waiting for an event that the
 * other process delivers has no local wake-up; it relies on its own timer alone.
 * On Node 20 a timeout signal only an AbortSignal.any() depends on can be
 * collected before it fires, and such requests never got an answer.
 */
describe.each(processBackends())(
  "two gateway processes on $name, each sent the same 300 new events at once",
  { timeout: 60_000 },
  (backend) => {
    const pair = gatewayPairOn(backend, { SYNC_WAIT_MS: String(SYNC_WAIT_MS), RATE_LIMIT_MAX: "0" });

    it("answers all 600 requests within SYNC_WAIT_MS + 2 s, one order per event", async () => {
      const { onec, gateways } = pair;
      const events = Array.from({ length: 300 }, () => orderPaidEvent());
      /** One send: its status and how long its answer took. */
      const send = async (url: string, body: string) => {
        const sentAt = Date.now();
        try {
          const response = await request(`${url}/integration/v1/orders/paid`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body,
            signal: AbortSignal.timeout(ANSWER_BOUND_MS + 5000),
          });
          await response.body.text();
          return { status: response.statusCode, ms: Date.now() - sentAt };
        } catch (error) {
          return { status: 0, ms: Date.now() - sentAt, error: String(error) };
        }
      };
      // What is timed is the wait, not a cold start: each gateway first takes a few events, as a running one
      // has, so that its database connections are open and its code compiled before the 300 come at once.
      await Promise.all(
        gateways.flatMap((gateway) =>
          Array.from({ length: 10 }, () => send(gateway.url, JSON.stringify(orderPaidEvent()))),
        ),
      );
      // A 503 ("cannot accept now") is an answer too, and a sender resends the same bytes (README's answer map):
      // on a loaded machine the database's 1 s deadline gives some, and each must come within the bound as well.
      const answers = await Promise.all(
        events.flatMap((event) =>
          gateways.map(async (gateway) => {
            const body = JSON.stringify(event);
            const sends = [await send(gateway.url, body)];
            while (sends.at(-1)?.status === 503 && sends.length < 10) sends.push(await send(gateway.url, body));
            return sends;
          }),
        ),
      );
      const every = answers.flat();
      expect(every.filter((a) => a.status === 0).length, "requests that got no answer").toBe(0);
      const slowest = Math.max(...every.map((a) => a.ms));
      const resent = every.length - answers.length;
      console.log(
        `600 requests on two gateways (${backend.name}): all answered, the slowest after ${slowest} ms; ${resent} 503s sent again`,
      );
      expect(slowest).toBeLessThan(ANSWER_BOUND_MS);
      // Resending is the exception, not the way through: alone on this machine none is needed, and under
      // the full suite's load a few; a tenth of the requests refused would be a gateway that cannot cope.
      expect(resent, "503s that had to be sent again").toBeLessThan(60);
      const finals = answers.map((sends) => sends.at(-1)?.status);
      expect(finals.every((status) => status === 200 || status === 201 || status === 202)).toBe(true);
      // Each event was recorded by one of its requests: never two first answers (201) for one event.
      for (let i = 0; i < events.length; i++) {
        const firsts = answers
          .slice(2 * i, 2 * i + 2)
          .flat()
          .filter((a) => a.status === 201);
        expect(firsts.length).toBeLessThanOrEqual(1);
      }
      const keys = events.map((e) => e.event_id);
      await ordersFor(onec, keys);
      expect(keys.filter((key) => ordersOf(onec, key) !== 1)).toEqual([]);
    });

    // What wakes a request waiting on one process when the other settles its event: on SQLite only
    // the waiter's own polling; on PostgreSQL the register's LISTEN/NOTIFY, polling being the fallback.
    if (backend.name === "postgres") {
      it("tells every settle, by either process, to the watchers of another instance on the register", async () => {
        const { onec, gateways } = pair;
        const listener = await pair.openRegister();
        const events = Array.from({ length: 50 }, () => orderPaidEvent());
        const keys = new Set(events.map((e) => e.event_id));
        const heard = new Set<string>();
        let allHeard: () => void = () => {};
        const heardAll = new Promise<void>((resolve) => {
          allHeard = resolve;
        });
        listener.watch((change) => {
          if (change.kind !== "settled" || change.status !== "SUCCEEDED" || !keys.has(change.eventId)) return;
          heard.add(change.eventId);
          if (heard.size === keys.size) allHeard();
        });

        const answers = await Promise.all(
          events.map((event, i) => postEvent(gateways[i % 2 === 0 ? 0 : 1].url, event)),
        );
        expect(answers.every((a) => a.status === 201 || a.status === 202)).toBe(true);
        await ordersFor(onec, keys);
        // Each settle follows its 1C order within moments, and its notice goes out with the settle's commit.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([heardAll, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
        clearTimeout(timer);
        expect([...keys].filter((key) => !heard.has(key))).toEqual([]);
      });
    }
  },
);
