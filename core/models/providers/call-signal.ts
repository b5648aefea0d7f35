/**
 * A per-call AbortSignal that follows the caller's. A job's signal lives for thousands of calls;
 * the SDKs add an `abort` listener to whatever signal they are given and never remove it, and an
 * EventTarget checks its whole listener list on every add and remove, so handing them the job's
 * signal makes each call slower than the last. Each call gets its own signal instead, linked to
 * the caller's for exactly as long as the call lasts.
 * Runs on: Node (core).
 */

export interface CallSignal {
  /** Aborts when the caller's signal aborts (or has already). */
  signal: AbortSignal;
  /** Unlinks from the caller's signal: call when the call ends, however it ends. */
  release(): void;
}

export function callSignal(parent: AbortSignal | undefined, timeoutMs?: number): CallSignal {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => ac.abort(parent!.reason);
  if (parent) {
    if (parent.aborted) ac.abort(parent.reason);
    else parent.addEventListener('abort', onAbort, { once: true });
  }
  if (timeoutMs !== undefined) {
    timer = setTimeout(() => ac.abort(new DOMException('The operation timed out', 'TimeoutError')), timeoutMs);
  }
  return {
    signal: ac.signal,
    release() {
      parent?.removeEventListener('abort', onAbort);
      if (timer) clearTimeout(timer);
    },
  };
}
