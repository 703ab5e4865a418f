import { orderPaidEvent } from "../support/events.ts";
import type { HttpAnswer } from "../support/http.ts";
import { answerMapDepartures } from "./answer-map.ts";
import { type Balancer, type Broken, type Forwarded, isBroken } from "./balancer.ts";

const ORDERS_PAID = "/integration/v1/orders/paid";
/** A shop resends an event it got no 2xx for, with the same bytes; this many times before it counts it lost. */
const SENDS_PER_EVENT = 20;

/** Everything the shop saw through the balancer. */
export interface ShopTally {
  /** Events some answer acknowledged (2xx): each must end SUCCEEDED with one order. */
  acknowledged: string[];
  /** Events never acknowledged after every resend. */
  unacknowledged: string[];
  /** Answers by status. */
  statuses: Record<number, number>;
  /** Every 5xx answer, whoever gave it. */
  serverErrors: Forwarded[];
  /** Connections that broke after the request was sent (the shop would get the balancer's 502). */
  broken: Broken[];
  /** Answers outside the README's answer map for copies of a valid event. */
  departures: string[];
}

export interface ShopLoad {
  /** Events acknowledged so far. */
  acknowledgedCount(): number;
  /** Lets every sender finish the event it is on, then reports. */
  stop(): Promise<ShopTally>;
}

/**
 * `senders` concurrent senders, each sending new events one after another
 * through the balancer: every event until an answer acknowledges it, then
 * once more (a retry whose first answer was lost), as a shop does.
 */
export function startShopLoad(balancer: Balancer, senders: number): ShopLoad {
  const tally: ShopTally = {
    acknowledged: [],
    unacknowledged: [],
    statuses: {},
    serverErrors: [],
    broken: [],
    departures: [],
  };
  let stopping = false;

  const send = async (body: string): Promise<Forwarded | Broken> => {
    const outcome = await balancer.post(ORDERS_PAID, body, { "content-type": "application/json" });
    if (isBroken(outcome)) tally.broken.push(outcome);
    else {
      tally.statuses[outcome.status] = (tally.statuses[outcome.status] ?? 0) + 1;
      if (outcome.status >= 500) tally.serverErrors.push(outcome);
    }
    return outcome;
  };

  const sendEvent = async (): Promise<void> => {
    const event = orderPaidEvent();
    const body = JSON.stringify(event);
    const answers: HttpAnswer[] = [];
    for (let sends = 0; sends < SENDS_PER_EVENT && !answers.some(isAcknowledgement); sends++) {
      const outcome = await send(body);
      if (!isBroken(outcome) && outcome.status < 500) answers.push(outcome);
    }
    if (!answers.some(isAcknowledgement)) {
      tally.unacknowledged.push(event.event_id);
      return;
    }
    tally.acknowledged.push(event.event_id);
    const repeat = await send(body);
    if (!isBroken(repeat) && repeat.status < 500) answers.push(repeat);
    tally.departures.push(...answerMapDepartures(event.event_id, answers));
  };

  const sender = async (): Promise<void> => {
    while (!stopping) await sendEvent();
  };
  const running = Promise.all(Array.from({ length: senders }, sender));

  return {
    acknowledgedCount: () => tally.acknowledged.length,
    stop: async () => {
      stopping = true;
      await running;
      return tally;
    },
  };
}

function isAcknowledgement(answer: HttpAnswer): boolean {
  return answer.status >= 200 && answer.status < 300;
}
