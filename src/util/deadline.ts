/**
 * An abort signal that fires after `ms`, on a timer this code owns.
 *
 * Not AbortSignal.timeout(): on Node 20 a timeout signal that only a composite
 * AbortSignal.any() depends on can be garbage-collected before it fires
 * (nodejs/node#57736), and a wait that depended on it never ends. A timer we
 * hold cannot be collected, and clear() releases it as soon as the work is done.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  clear(): void;
}

/** The outcome, or `late` once `ms` have passed without one; the timer is cleared either way, and a rejection passes on. */
export function withinDeadline<T>(outcome: Promise<T>, ms: number, late: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late), ms);
  });
  return Promise.race([outcome, deadline]).finally(() => clearTimeout(timer));
}

/** `linked`: a signal that ends the work sooner, with its own reason (the process stopping). */
export function deadline(ms: number, linked?: AbortSignal): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, "TimeoutError")), ms);
  const follow = () => controller.abort(linked?.reason);
  if (linked?.aborted === true) follow();
  else linked?.addEventListener("abort", follow, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      linked?.removeEventListener("abort", follow);
    },
  };
}
