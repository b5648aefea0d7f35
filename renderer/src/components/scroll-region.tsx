/**
 * A table that may be wider (or taller) than its card scrolls inside it: a named region that the
 * keyboard can focus and scroll, so the page itself never scrolls sideways at 900 px.
 * Runs on: renderer.
 */
import type { ReactNode } from 'react';

export function ScrollRegion({ label, className, children }: { label: string; className?: string; children: ReactNode }) {
  return (
    <div className={`table-scroll${className ? ` ${className}` : ''}`} role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
