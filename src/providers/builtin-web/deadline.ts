/**
 * Runs `work` with a signal that aborts when `parent` does or after `ms`, whichever comes first. The
 * timer is cleared once the work settles (AbortSignal.timeout would leave it pending for its full term).
 */
export async function withDeadline<T>(parent: AbortSignal, ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new DOMException('The time limit passed.', 'TimeoutError')), ms);
  try {
    return await work(AbortSignal.any([parent, deadline.signal]));
  } finally {
    clearTimeout(timer);
  }
}

/** Waits `ms`, or rejects with `failure()` as soon as `signal` aborts (the call's time ran out meanwhile). */
export function waitUnlessAborted(ms: number, signal: AbortSignal, failure: () => unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer);
      reject(failure());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', aborted);
      resolve();
    }, ms);
    if (signal.aborted) aborted();
    else signal.addEventListener('abort', aborted, { once: true });
  });
}
