/**
 * Collects items (pushed events) and hands them over once per animation frame, so a burst of
 * events costs one state update and one render. A background tab gets no animation frames, so a
 * timer flushes too, whichever comes first; nothing piles up while the tab is hidden.
 * Runs on: renderer.
 */

const HIDDEN_TAB_FLUSH_MS = 250;

export function createFrameBatcher<T>(flush: (items: T[]) => void): (item: T) => void {
  let queue: T[] = [];
  let frame: number | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const run = (): void => {
    if (frame !== null) cancelAnimationFrame(frame);
    if (timer !== null) clearTimeout(timer);
    frame = null;
    timer = null;
    const items = queue;
    queue = [];
    if (items.length > 0) flush(items);
  };

  return (item: T) => {
    queue.push(item);
    if (frame === null) {
      frame = requestAnimationFrame(run);
      timer = setTimeout(run, HIDDEN_TAB_FLUSH_MS);
    }
  };
}
