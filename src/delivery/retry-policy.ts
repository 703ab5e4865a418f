/**
 * The one place that decides when the next attempt may run. Pure.
 * delay = min(cap, base × 2^(attempt-1)) × uniform(0.8, 1.2); a Retry-After
 * from 1C is honoured when longer, but never beyond the cap.
 */
export interface RetryPolicy {
  baseMs: number;
  maxDelayMs: number;
}

export function nextAttemptDelayMs(
  policy: RetryPolicy,
  attemptsMade: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, attemptsMade - 1);
  const raw = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(exponent, 52));
  const jittered = Math.round(raw * (0.8 + 0.4 * random()));
  const wanted = retryAfterMs === undefined ? jittered : Math.max(jittered, retryAfterMs);
  return Math.min(policy.maxDelayMs, wanted);
}
