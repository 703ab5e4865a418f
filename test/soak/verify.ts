import type { EmulatorOrder } from "../../src/onec-emulator/emulator.ts";
import type { Ledger } from "./client.ts";
import type { Reply } from "./http.ts";
import type { RegisterRow } from "./register.ts";

/** Everything collected after the drain: four accounts of the same events. */
export interface Evidence {
  readonly ledgers: readonly Ledger[];
  readonly register: ReadonlyMap<string, RegisterRow>;
  /** 1C's orders as its journal holds them: the ground truth. */
  readonly journal: readonly EmulatorOrder[];
  /** What the running emulator serves, to check that its journal and its store agree. */
  readonly onecOrders: readonly EmulatorOrder[];
  /** GET of every status URL, per gateway. */
  readonly statusViews: readonly ReadonlyMap<string, Reply>[];
  /** One more POST of every event's bytes, per gateway. */
  readonly resends: readonly ReadonlyMap<string, Reply>[];
  /** The Idempotency-Key the gateway gives 1C for an event_id. */
  readonly onecKey: (eventId: string) => string;
}

export const FIGURES = [
  "duplicates",
  "lost",
  "stuck",
  "disagreements",
  "resendMismatches",
  "unanswered",
  "unknownOrders",
  "journalMismatches",
] as const;
export type Failure = (typeof FIGURES)[number];

export interface Findings {
  readonly sent: number;
  readonly requests: number;
  readonly acknowledged: number;
  readonly created: number;
  readonly connectionErrors: number;
  /** Final answers the shop got, by status. */
  readonly finalStatuses: ReadonlyMap<number, number>;
  /** Register rows by status (and error class for FAILED_FINAL). */
  readonly registerStates: ReadonlyMap<string, number>;
  readonly counts: Readonly<Record<Failure, number>>;
  /** A few event ids with the reason, per failure, to start an investigation from. */
  readonly samples: ReadonlyMap<Failure, string[]>;
}

interface OrderRef {
  readonly id: string;
  readonly number: string;
}

const SAMPLE_LIMIT = 5;
const PENDING = new Set(["PROCESSING", "FAILED_RETRYABLE"]);

/**
 * Compares the shop's answers, the register, 1C's journal and every status
 * URL, and the resends. An event counts once per kind of failure however many
 * ways it shows it; the samples say which way.
 */
export function verify(evidence: Evidence): Findings {
  const counts: Record<Failure, number> = Object.fromEntries(FIGURES.map((f) => [f, 0])) as Record<Failure, number>;
  const samples = new Map<Failure, string[]>();
  const fail = (failure: Failure, eventId: string, why: string, count = 1): void => {
    counts[failure] += count;
    const list = samples.get(failure) ?? [];
    if (list.length < SAMPLE_LIMIT) list.push(`${eventId}: ${why}`);
    samples.set(failure, list);
  };

  const ordersByKey = new Map<string, EmulatorOrder[]>();
  for (const order of evidence.journal) ordersByKey.set(order.key, [...(ordersByKey.get(order.key) ?? []), order]);
  const sentKeys = new Set<string>();
  const finalStatuses = new Map<number, number>();
  let sent = 0;
  let requests = 0;
  let acknowledged = 0;
  let connectionErrors = 0;

  for (const ledger of evidence.ledgers) {
    if (ledger.requests === 0) continue;
    const { eventId } = ledger.event;
    const key = evidence.onecKey(eventId);
    sentKeys.add(key);
    sent += 1;
    requests += ledger.requests;
    connectionErrors += ledger.connectionErrors;
    // Counted per request: a gateway that keeps a request open past SYNC_WAIT_MS + 5 s has lost track of it.
    const unanswered = ledger.unanswered.length;
    if (unanswered > 0) {
      const which = ledger.unanswered.join("; ");
      fail("unanswered", eventId, `${unanswered} of ${ledger.requests} requests unanswered: ${which}`, unanswered);
    }
    if (ledger.final !== undefined) bump(finalStatuses, ledger.final.status);

    const acked = ledger.answers.some((a) => a.status === 200 || a.status === 201 || a.status === 202);
    if (acked) acknowledged += 1;
    const orders = ordersByKey.get(key) ?? [];
    if (orders.length > 1) fail("duplicates", eventId, `${orders.length} orders: ${orders.map(numberOf).join(", ")}`);
    const onec = orders[0]?.order;
    const row = evidence.register.get(eventId);
    if (acked && onec === undefined) fail("lost", eventId, `acknowledged, no order in 1C; register ${describe(row)}`);

    if (row === undefined || PENDING.has(row.status) || ledger.final === undefined) {
      fail(
        "stuck",
        eventId,
        `register ${describe(row)}; shop ${ledger.final ? `got ${ledger.final.status}` : "has no final answer"}`,
      );
    }

    const disagreement = disagreementOf(evidence, ledger, row, onec);
    if (disagreement !== undefined) fail("disagreements", eventId, disagreement);

    const resend = resendProblem(evidence, ledger, onec);
    if (resend !== undefined) fail("resendMismatches", eventId, resend);
  }

  for (const [key, orders] of ordersByKey) {
    if (!sentKeys.has(key))
      fail("unknownOrders", key, `1C holds ${orders.map(numberOf).join(", ")} for a key never sent`);
  }
  const journalMismatch = compareJournal(evidence.journal, evidence.onecOrders);
  if (journalMismatch !== undefined) fail("journalMismatches", "1C", journalMismatch);

  const registerStates = new Map<string, number>();
  for (const row of evidence.register.values()) {
    bump(registerStates, row.status === "FAILED_FINAL" ? `FAILED_FINAL ${row.lastErrorClass}` : row.status);
  }
  return {
    sent,
    requests,
    acknowledged,
    created: evidence.journal.length,
    connectionErrors,
    finalStatuses,
    registerStates,
    counts,
    samples,
  };
}

/** The first way the gateway's account of the event differs from 1C's, if any. */
function disagreementOf(
  evidence: Evidence,
  ledger: Ledger,
  row: RegisterRow | undefined,
  onec: OrderRef | undefined,
): string | undefined {
  if (row?.status === "FAILED_FINAL" && onec !== undefined) {
    return `register FAILED_FINAL (${row.lastErrorClass}) but 1C holds ${onec.number}`;
  }
  if (row?.status === "SUCCEEDED" && !sameOrder({ id: row.orderId, number: row.orderNumber }, onec)) {
    return `register says ${row.orderNumber}, 1C ${onec?.number ?? "has nothing"}`;
  }
  for (const [gateway, views] of evidence.statusViews.entries()) {
    const view = views.get(ledger.event.eventId);
    const problem = statusViewProblem(view, onec);
    if (problem !== undefined) return `status URL on gateway ${"AB"[gateway]}: ${problem}`;
  }
  for (const answer of ledger.answers) {
    if (answer.status === 200 || answer.status === 201) {
      const order = orderIn(answer.body);
      if (!sameOrder(order ?? { id: null, number: null }, onec)) {
        return `shop got ${answer.status} with ${order?.number ?? "no order"}, 1C ${onec?.number ?? "has nothing"}`;
      }
    }
  }
  if (ledger.final !== undefined && ledger.final.status >= 300 && onec !== undefined) {
    return `shop's final answer ${ledger.final.status} but 1C holds ${onec.number}`;
  }
  return undefined;
}

function statusViewProblem(view: Reply | undefined, onec: OrderRef | undefined): string | undefined {
  if (view === undefined || view.kind !== "answer") return `no answer (${view?.kind ?? "not asked"})`;
  if (view.status !== 200) return `answered ${view.status}`;
  const parsed = parse(view.body);
  const status = parsed?.status;
  if (status === "PROCESSING" || status === "FAILED_RETRYABLE") return undefined; // counted as stuck
  if (status === "FAILED_FINAL") {
    return onec === undefined ? undefined : `FAILED_FINAL (${String(parsed?.error_class)}) but 1C holds ${onec.number}`;
  }
  const order = orderIn(view.body);
  if (!sameOrder(order ?? { id: null, number: null }, onec)) {
    return `${String(status)} with ${order?.number ?? "no order"}, 1C ${onec?.number ?? "has nothing"}`;
  }
  return undefined;
}

/** The resend must be 200 on every gateway, the same bytes everywhere and as before, naming 1C's order. */
function resendProblem(evidence: Evidence, ledger: Ledger, onec: OrderRef | undefined): string | undefined {
  const bodies: string[] = [];
  for (const [gateway, resends] of evidence.resends.entries()) {
    const reply = resends.get(ledger.event.eventId);
    if (reply === undefined || reply.kind !== "answer") return `gateway ${"AB"[gateway]}: ${reply?.kind ?? "not sent"}`;
    if (reply.status !== 200) return `gateway ${"AB"[gateway]} answered ${reply.status}`;
    bodies.push(reply.body);
  }
  const [first] = bodies;
  if (first === undefined) return "not resent";
  if (bodies.some((body) => body !== first)) return "the gateways answered different bytes";
  const earlier = ledger.answers.find((a) => (a.status === 200 || a.status === 201) && a.body !== first);
  if (earlier !== undefined) return `differs from a ${earlier.status} the shop got during the run`;
  if (!sameOrder(orderIn(first) ?? { id: null, number: null }, onec)) return "names another order than 1C holds";
  return undefined;
}

function compareJournal(journal: readonly EmulatorOrder[], served: readonly EmulatorOrder[]): string | undefined {
  const key = (o: EmulatorOrder) => `${o.key} ${o.hash} ${o.order.id} ${o.order.number}`;
  const a = journal.map(key).sort();
  const b = served.map(key).sort();
  if (a.length !== b.length) return `journal has ${a.length} orders, the emulator serves ${b.length}`;
  const index = a.findIndex((line, i) => line !== b[i]);
  return index === -1 ? undefined : `journal and emulator differ: ${a[index]} / ${b[index]}`;
}

function sameOrder(order: { id: string | null; number: string | null }, onec: OrderRef | undefined): boolean {
  return onec !== undefined && order.id === onec.id && order.number === onec.number;
}

function orderIn(body: string): OrderRef | undefined {
  const order = parse(body)?.order;
  if (typeof order !== "object" || order === null) return undefined;
  const { id, number } = order as Record<string, unknown>;
  return typeof id === "string" && typeof number === "string" ? { id, number } : undefined;
}

function parse(body: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function describe(row: RegisterRow | undefined): string {
  if (row === undefined) return "has no row";
  const why = row.lastErrorClass === null ? "" : ` (${row.lastErrorClass})`;
  return `${row.status}${why}, ${row.attempts} attempts, ${row.finishedAttempts} finished`;
}

function numberOf(order: EmulatorOrder): string {
  return order.order.number;
}

function bump<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}
