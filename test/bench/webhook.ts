import { recordEvents } from "./finished-events.ts";
import type { GoalLine } from "./goals.ts";
import { orderPaidBodies, repeatingBodies } from "./load.ts";
import { type PeerGoal, type PeersReport, peerGoalLines, peersVerdict, printPeers } from "./peers/report.ts";
import { type Contender, type RoundSettings, runRounds } from "./peers/rounds.ts";
import { type Server, stopServer, tail } from "./processes.ts";
import { prebuilt, SHOPIFY_PATH, shopifyOrders } from "./webhook-load.ts";

/**
 * The webhook scenario: a platform's path next to the native endpoint. Two
 * gateways with accept-off's settings (DELIVERER=off) and the same
 * SOURCES_FILE, each on its own register, loaded in turn in the peers'
 * rounds (peers/rounds.ts): new events to POST /integration/v1/orders/paid
 * against new Shopify orders to the sender's webhook URL, then repeats of
 * events recorded first through each. Not the table's accept settings: a
 * delivery to 1C costs the same whichever path accepted the event, and each
 * gateway's deliverer would go on draining its backlog during the other's
 * round, on the same CPUs.
 */

const TITLES = {
  new: "new orders (every request a new event to the native endpoint, a new signed Shopify order to the webhook)",
  repeat:
    "repeats (every request repeats one recorded first, still pending with DELIVERER=off: the same event, the same Shopify delivery)",
} as const;
export type WebhookWorkload = keyof typeof TITLES;

const DURABLE = "yes: WAL, synchronous=FULL";

export interface WebhookScenario {
  /** Starts a gateway with the table's settings plus `env`, on a register of its own named after it. */
  readonly startGateway: (name: string, env: Readonly<Record<string, string>>) => Promise<Server>;
  readonly sourcesFile: string;
  readonly recorded: number;
  readonly rounds: RoundSettings;
  readonly goals: readonly PeerGoal<WebhookWorkload>[];
  /** In every native event_id. */
  readonly runId: string;
}

export async function webhookScenario(options: WebhookScenario): Promise<{ ok: boolean; goals: GoalLine[] }> {
  console.log("");
  const env = { DELIVERER: "off", SOURCES_FILE: options.sourcesFile };
  const servers: Server[] = [];
  try {
    for (const name of ["webhook-native", "webhook-shopify"]) servers.push(await options.startGateway(name, env));
    const [native, shopify] = servers as [Server, Server];
    const nextEvent = orderPaidBodies(`webhook-${options.runId}`);
    const nextOrder = shopifyOrders();
    const events = Array.from({ length: options.recorded }, () => nextEvent());
    const orders = Array.from({ length: options.recorded }, () => nextOrder());
    process.stdout.write(`webhook: recording ${options.recorded} events through each endpoint...\n`);
    await recordEvents(native.url, events, 202);
    await recordEvents(shopify.url, orders, 202, SHOPIFY_PATH);
    const newOrders = prebuilt(nextOrder, SHOPIFY_PATH, 202);
    const contenders: Contender<WebhookWorkload>[] = [
      {
        name: "native",
        server: native,
        profiled: true,
        requests: {
          new: { nextBody: nextEvent, expectedStatus: 202 },
          repeat: { nextBody: repeatingBodies(events), expectedStatus: 202 },
        },
      },
      {
        name: "webhook",
        server: shopify,
        profiled: true,
        requests: {
          new: newOrders,
          repeat: { nextBody: repeatingBodies(orders), path: SHOPIFY_PATH, expectedStatus: 202 },
        },
      },
    ];
    const runs = await runRounds(contenders, ["new", "repeat"], options.rounds, (line) =>
      process.stdout.write(`running webhook, ${line}...\n`),
    );
    const report: PeersReport<WebhookWorkload> = {
      scenario: "webhook",
      titles: TITLES,
      runs,
      gateway: "webhook",
      durable: { native: DURABLE, webhook: DURABLE },
      goals: options.goals,
    };
    printPeers(report);
    const late = newOrders.builtDuringLoad();
    if (late > 0) console.log(`  ${late} Shopify deliveries were built and signed during a run: the pool ran out`);
    return { ok: peersVerdict(report), goals: peerGoalLines(report) };
  } catch (error) {
    for (const server of servers) console.error(`${server.name} output (tail):\n${tail(server.logFile)}`);
    throw error;
  } finally {
    await Promise.all(servers.map((server) => stopServer(server.child)));
  }
}

export function printWebhookSetup({ rounds, recorded }: Pick<WebhookScenario, "rounds" | "recorded">): void {
  console.log(
    `webhook: the native endpoint next to Shopify's orders/paid webhook; two gateways with accept-off's settings ` +
      `(DELIVERER=off: delivery costs the same on both paths, and one gateway's deliverer would take CPU during the ` +
      `other's round), otherwise as the table's (WAL synchronous=FULL, LOG_LEVEL=info, metrics on, RATE_LIMIT_MAX=0, ` +
      `SYNC_WAIT_MS=0), both with the same SOURCES_FILE, each on its own register; loaded in turn as the peers ` +
      `(${rounds.connections} connections, ${rounds.rounds} rounds of ${rounds.roundSeconds} s after a ` +
      `${rounds.warmupSeconds} s warm-up each, median of the rounds)`,
  );
  console.log(`  native   a new event_id in every request (202); repeats of ${recorded} recorded events (202)`);
  console.log(
    `  webhook  a new Shopify order in every request under a new X-Shopify-Webhook-Id, HMAC-signed, all built ` +
      `before each run (202); repeats of ${recorded} recorded deliveries, the same bytes and headers (202)`,
  );
}
