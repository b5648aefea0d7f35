/**
 * A table that may be wider (or taller) than its card scrolls inside it: a named region that the
 * keyboard can focus and scroll, so the page itself never scrolls sideways at 900 px. While
 * columns are hidden to the right, a fading edge with an arrow says so (a scroll bar alone is
 * invisible on systems that hide scroll bars until used).
 * Runs on: renderer.
 */
import { useLayoutEffect, useRef, useState, type ReactNode } from 'react';

/** Which sides of a scroll box hide content. */
type Hidden = 'none' | 'left' | 'right' | 'both';

function hiddenSides(el: HTMLElement): Hidden {
  const left = el.scrollLeft > 1;
  const right = el.scrollLeft + el.clientWidth < el.scrollWidth - 1;
  return left && right ? 'both' : left ? 'left' : right ? 'right' : 'none';
}

/**
 * Follows what a scroll box hides as it is scrolled, resized or its content changes; `layout`
 * names what else can widen the content without resizing a child (a grid's column count).
 */
export function useHiddenSides(ref: { current: HTMLElement | null }, layout?: unknown): Hidden {
  const [hidden, setHidden] = useState<Hidden>('none');
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => setHidden(hiddenSides(el));
    update();
    const observer = new ResizeObserver(update);
    observer.observe(el);
    for (const child of el.children) observer.observe(child);
    el.addEventListener('scroll', update, { passive: true });
    return () => {
      observer.disconnect();
      el.removeEventListener('scroll', update);
    };
  }, [ref, layout]);
  return hidden;
}

export function ScrollRegion({ label, className, children }: { label: string; className?: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const hidden = useHiddenSides(ref);
  return (
    <div className="scroll-frame" data-hidden={hidden}>
      <div ref={ref} className={`table-scroll${className ? ` ${className}` : ''}`} role="region" aria-label={label} tabIndex={0}>
        {children}
      </div>
      {hidden === 'right' || hidden === 'both' ? (
        <span className="scroll-cue" data-testid="scroll-cue" title="More columns to the right: scroll sideways" aria-hidden="true">
          ›
        </span>
      ) : null}
    </div>
  );
}
