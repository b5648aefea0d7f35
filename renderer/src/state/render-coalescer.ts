/**
 * Collects items (pushed events) and hands them over in batches: on an animation frame, and at
 * most once every `minIntervalMs`. A burst of events thus costs one state update and one render,
 * and a flood of them (a 10,000-job run at 100 events a second) costs at most ~10 renders a
 * second instead of one per frame, which leaves the main thread free for scrolling and hovering.
 * A hidden tab gets no animation frames, so there the timer flushes by itself; nothing piles up.
 * Runs on: renderer.
 */

export interface RenderCoalescerOptions {
  /** Least time between two flushes (default 100 ms). */
  minIntervalMs?: number;
}

export function coalescePerRender<T>(flush: (items: T[]) => void, opts: RenderCoalescerOptions = {}): (item: T) => void {
  const minInterval = opts.minIntervalMs ?? 100;
  let queue: T[] = [];
  let scheduled = false;
  let lastFlush = -Infinity;

  const run = (): void => {
    scheduled = false;
    lastFlush = performance.now();
    const items = queue;
    queue = [];
    if (items.length > 0) flush(items);
  };

  return (item: T) => {
    queue.push(item);
    if (scheduled) return;
    scheduled = true;
    const wait = Math.max(0, lastFlush + minInterval - performance.now());
    setTimeout(() => {
      if (document.hidden) run();
      else requestAnimationFrame(run);
    }, wait);
  };
}
