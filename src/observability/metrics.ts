import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { BreakerState } from "../delivery/breaker.ts";
import type { ProblemCode } from "../errors/catalogue.ts";

/** What the metrics read at scrape time, rather than counting along the way. */
export interface MetricSources {
  backlog(): Promise<{ pending: number; oldestPendingReceivedAt: number | null; failedFinal: number }>;
  breakerState(): BreakerState;
  now(): number;
}

const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/** The route label of an answer to a request no route matched (its 404, or a refusal on an unknown path). */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * The gateway's Prometheus metrics, in one registry per gateway (tests run
 * several in one process). Counters move as traffic flows; backlog gauges
 * are read from the register when scraped, so they are right across processes.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #accepted: Counter<"sender">;
  readonly #replayed: Counter<"sender" | "status">;
  readonly #conflicts: Counter<"sender">;
  readonly #rejected: Counter<"sender" | "code">;
  readonly #attempts: Counter<"outcome">;
  readonly #onecSeconds: Histogram<"outcome">;
  readonly #ended: Counter<"reason">;
  /** Answers counted per route pattern, then status code; handed to prom-client only when scraped. */
  readonly #answers = new Map<string, Map<number, number>>();

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "gateway_process_" });
    this.#accepted = new Counter({
      name: "gateway_events_accepted_total",
      help: "New events recorded in the register, by sender",
      labelNames: ["sender"],
      registers,
    });
    this.#replayed = new Counter({
      name: "gateway_events_replayed_total",
      help: "Repeats of recorded events answered from the register, by sender and HTTP status",
      labelNames: ["sender", "status"],
      registers,
    });
    this.#conflicts = new Counter({
      name: "gateway_events_conflicts_total",
      help: "Requests reusing an event_id with another body (409), by sender",
      labelNames: ["sender"],
      registers,
    });
    this.#rejected = new Counter({
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

    const answers = this.#answers;
    new Counter({
      name: "gateway_http_responses_total",
      help: `HTTP answers by route pattern (${UNMATCHED_ROUTE} when no route matched) and status code`,
      labelNames: ["route", "status_code"],
      registers,
      collect() {
        this.reset();
        for (const [route, byStatus] of answers) {
          for (const [status, count] of byStatus) this.inc({ route, status_code: String(status) }, count);
        }
      },
    });

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

  accepted(sender: string): void {
    this.#accepted.inc({ sender });
  }

  replayed(sender: string, status: number): void {
    this.#replayed.inc({ sender, status: String(status) });
  }

  conflict(sender: string): void {
    this.#conflicts.inc({ sender });
  }

  rejected(sender: string, code: ProblemCode): void {
    this.#rejected.inc({ sender, code });
  }

  attempt(outcome: string, durationMs: number): void {
    this.#attempts.inc({ outcome });
    this.#onecSeconds.observe({ outcome }, durationMs / 1000);
  }

  failedFinal(reason: string): void {
    this.#ended.inc({ reason });
  }

  /**
   * Once per answer, so it only bumps a number: prom-client's label hashing
   * (about 0.5 µs) is paid per series at scrape time instead. `route` is the
   * route's pattern, never the URL, so the series stay few.
   */
  httpResponse(route: string, statusCode: number): void {
    let byStatus = this.#answers.get(route);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.#answers.set(route, byStatus);
    }
    byStatus.set(statusCode, (byStatus.get(statusCode) ?? 0) + 1);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
