import { Counter, type CounterConfiguration, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { WEBHOOK_OUTCOME_LABELS } from "../accept/webhook-intake.ts";
import type { BreakerState } from "../delivery/breaker.ts";
import { NOTICED_OUTCOMES } from "../delivery/deliverer.ts";
import { FAILED_FINAL_REASONS } from "../delivery/retry-policy.ts";
import { PROBLEM_CODES, type ProblemCode } from "../errors/catalogue.ts";

/** What the metrics read at scrape time, rather than counting along the way. */
export interface MetricSources {
  backlog(): Promise<{ pending: number; oldestPendingReceivedAt: number | null; failedFinal: number }>;
  breakerState(): BreakerState;
  now(): number;
  /** The configured platform webhooks (SOURCES_FILE): their outcomes are shown at 0 from the start. */
  webhookSources?(): readonly { platform: string; sender: string }[];
  /** The senders this process takes events from (their ids): their counters are shown at 0 from the start. */
  senders?(): readonly string[];
}

const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/** The sender label of a refusal before any sender was known: a missing or wrong token (order-paid.ts). */
const NO_SENDER = "-";

/** The route label of an answer to a request no route matched (its 404, or a refusal on an unknown path). */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * The gateway's Prometheus metrics, in one registry per gateway (tests run
 * several in one process). Counters move as traffic flows; backlog gauges
 * are read from the register when scraped, so they are right across processes.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #accepted = new SeriesCounts();
  readonly #replayed = new SeriesCounts();
  readonly #conflicts = new SeriesCounts();
  readonly #rejected = new SeriesCounts();
  readonly #attempts: Counter<"outcome">;
  readonly #onecSeconds: Histogram<"outcome">;
  readonly #ended: Counter<"reason">;
  /** Answers by route pattern and status code. */
  readonly #answers = new SeriesCounts();
  readonly #webhooks = new SeriesCounts();

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "gateway_process_" });
    countedAtScrape(this.#accepted, {
      name: "gateway_events_accepted_total",
      help: "New events recorded in the register, by sender",
      labelNames: ["sender"],
      registers,
    });
    countedAtScrape(this.#replayed, {
      name: "gateway_events_replayed_total",
      help: "Repeats of recorded events answered from the register, by sender and HTTP status",
      labelNames: ["sender", "status"],
      registers,
    });
    countedAtScrape(this.#conflicts, {
      name: "gateway_events_conflicts_total",
      help: "Requests reusing an event_id with another body (409), by sender",
      labelNames: ["sender"],
      registers,
    });
    countedAtScrape(this.#rejected, {
      name: "gateway_events_rejected_total",
      help: "Requests refused before anything was recorded, by sender and problem code",
      labelNames: ["sender", "code"],
      registers,
    });
    this.#attempts = new Counter({
      name: "gateway_delivery_attempts_total",
      help: "Attempts by outcome: 1C's answer to a POST (delivered, rejected, conflict, errored, unauthorized, retryable), a lookup before stopping (lookup_found, lookup_absent, lookup_unknown), or lease_lost",
      labelNames: ["outcome"],
      registers,
    });
    this.#onecSeconds = new Histogram({
      name: "gateway_onec_request_duration_seconds",
      help: "Duration of calls to 1C, by outcome",
      labelNames: ["outcome"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.#ended = new Counter({
      name: "gateway_events_failed_final_total",
      help: "Events that ended FAILED_FINAL, by reason (onec_rejected, onec_conflict, onec_error, max_attempts, max_age, crash_loop)",
      labelNames: ["reason"],
      registers,
    });

    countedAtScrape(this.#answers, {
      name: "gateway_http_responses_total",
      help: `HTTP answers by route pattern (${UNMATCHED_ROUTE} when no route matched) and status code`,
      labelNames: ["route", "status_code"],
      registers,
    });

    countedAtScrape(this.#webhooks, {
      name: "gateway_webhook_deliveries_total",
      help: "Platforms' webhook deliveries by platform, sender and outcome: accepted, repeated, ignored, unmapped, ping, unauthorized, malformed, or the problem code of a refusal",
      labelNames: ["platform", "sender", "outcome"],
      registers,
    });
    for (const { platform, sender } of sources.webhookSources?.() ?? []) {
      for (const outcome of WEBHOOK_OUTCOME_LABELS) this.#webhooks.zero([platform, sender, outcome]);
    }
    this.#zeroSenders(sources.senders?.() ?? []);
    for (const outcome of NOTICED_OUTCOMES) {
      this.#attempts.inc({ outcome }, 0);
      this.#onecSeconds.zero({ outcome });
    }
    for (const reason of FAILED_FINAL_REASONS) this.#ended.inc({ reason }, 0);

    let backlog: ReturnType<MetricSources["backlog"]> | undefined;
    // One register query per scrape feeds all three gauges.
    const readBacklog = () => {
      backlog ??= sources.backlog().finally(() => {
        backlog = undefined;
      });
      return backlog;
    };
    new Gauge({
      name: "gateway_pending_events",
      help: "Events the gateway still owns (PROCESSING or FAILED_RETRYABLE)",
      registers,
      async collect() {
        this.set((await readBacklog()).pending);
      },
    });
    new Gauge({
      name: "gateway_oldest_pending_age_seconds",
      help: "Age of the oldest pending event; 0 when nothing is pending",
      registers,
      async collect() {
        const { oldestPendingReceivedAt } = await readBacklog();
        this.set(oldestPendingReceivedAt === null ? 0 : (sources.now() - oldestPendingReceivedAt) / 1000);
      },
    });
    new Gauge({
      name: "gateway_failed_final_events",
      help: "Events in FAILED_FINAL, waiting for support",
      registers,
      async collect() {
        this.set((await readBacklog()).failedFinal);
      },
    });
    new Gauge({
      name: "gateway_breaker_state",
      help: "Circuit breaker toward 1C in this process: 0 closed, 1 half-open, 2 open",
      registers,
      collect() {
        this.set(BREAKER_VALUE[sources.breakerState()]);
      },
    });
  }

  /**
   * Every label value a sender's counters can take, at 0: rate() and increase() see a series only
   * from its first sample, so a refusal or a conflict counted into a new series would never show.
   */
  #zeroSenders(senders: readonly string[]): void {
    this.#rejected.zero([NO_SENDER, "GW_ERR_UNAUTHORIZED"]);
    for (const sender of senders) {
      this.#accepted.zero([sender]);
      this.#conflicts.zero([sender]);
      for (const code of PROBLEM_CODES) this.#rejected.zero([sender, code]);
    }
  }

  accepted(sender: string): void {
    this.#accepted.add(sender);
  }

  replayed(sender: string, status: number): void {
    this.#replayed.add(sender, String(status));
  }

  conflict(sender: string): void {
    this.#conflicts.add(sender);
  }

  rejected(sender: string, code: ProblemCode): void {
    this.#rejected.add(sender, code);
  }

  attempt(outcome: string, durationMs: number): void {
    this.#attempts.inc({ outcome });
    this.#onecSeconds.observe({ outcome }, durationMs / 1000);
  }

  failedFinal(reason: string): void {
    this.#ended.inc({ reason });
  }

  /** `sender` is the URL's, configured or not: an unknown one is counted once per outcome it got. */
  webhook(platform: string, sender: string, outcome: string): void {
    this.#webhooks.addAll([platform, sender, outcome]);
  }

  /** `route` is the route's pattern, never the URL, so the series stay few. */
  httpResponse(route: string, statusCode: number): void {
    this.#answers.add(route, String(statusCode));
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * A counter's series as plain numbers, handed to prom-client only when
 * scraped: prom-client hashes the label object on every `inc` (sorts its
 * keys, builds a string, about 0.5 µs), and the accept path counts every
 * request several times. Here a count is one Map lookup by the label values.
 */
class SeriesCounts {
  readonly #series = new Map<string, { values: string[]; count: number }>();

  add(first: string, second?: string): void {
    const key = second === undefined ? first : `${first}\u0000${second}`;
    const series = this.#series.get(key);
    if (series === undefined) {
      this.#series.set(key, { values: second === undefined ? [first] : [first, second], count: 1 });
    } else series.count += 1;
  }

  /** For counters of three labels or more, off the hottest paths (the array is the key's only cost). */
  addAll(values: readonly string[]): void {
    const key = values.join("\u0000");
    const series = this.#series.get(key);
    if (series === undefined) this.#series.set(key, { values: [...values], count: 1 });
    else series.count += 1;
  }

  /**
   * A series shown at 0 before its first event: rate() and increase() see a
   * series only from its first sample, so one born at 1 hides that first event.
   */
  zero(values: readonly string[]): void {
    const key = values.join("\u0000");
    if (!this.#series.has(key)) this.#series.set(key, { values: [...values], count: 0 });
  }

  reportTo(counter: Counter<string>): void {
    counter.reset();
    for (const { values, count } of this.#series.values()) counter.labels(...values).inc(count);
  }
}

/** A prom-client counter whose values come from `counts` at each scrape. */
function countedAtScrape(counts: SeriesCounts, configuration: CounterConfiguration<string>): void {
  new Counter({
    ...configuration,
    collect() {
      counts.reportTo(this);
    },
  });
}
