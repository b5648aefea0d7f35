/**
 * The model x epoch grid of a run's jobs, drawn on a canvas: one cell per job, coloured by status,
 * a running job filled as far as its vignettes have landed, a corner mark on a job that needed
 * more than one attempt. A run may have 10,000 jobs updated hundreds of times a second, so the
 * grid draws only the cells in view (the scroll area is a sized spacer; the canvas stays put), at
 * most once per animation frame, and React renders none of the cells.
 * Hover a cell for its details; click to pin them. From the keyboard, the grid takes the focus and
 * the arrow keys (Home/End too) move the pinned job, whose details the run view shows; Escape unpins.
 * Runs on: renderer.
 */
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { Job } from '../api/types.js';
import { formatInt } from '../format.js';
import type { JobTable } from '../state/job-table.js';
import { useThemeColors, type ThemeColors } from './use-theme-colors.js';

const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const HEADER_H = 24;
const MAX_LABEL_W = 200;
const MIN_CELL_W = 8;
const MAX_CELL_W = 44;
const CORNER_LABEL = 'model \\ epoch';
const MAX_VIEW_H = 460;

interface Layout {
  labelW: number;
  labels: string[];
  cellW: number;
  cellH: number;
  totalW: number;
  totalH: number;
}

function measureLayout(models: readonly string[], epochs: number, width: number): Layout {
  const ctx = document.createElement('canvas').getContext('2d')!;
  ctx.font = FONT;
  const widest = Math.max(ctx.measureText(CORNER_LABEL).width, ...models.map((m) => ctx.measureText(m).width));
  const labelW = Math.min(MAX_LABEL_W, Math.ceil(widest) + 20);
  const labels = models.map((m) => ellipsize(ctx, m, labelW - 16));
  const cellW = Math.max(MIN_CELL_W, Math.min(MAX_CELL_W, Math.floor((width - labelW) / Math.max(epochs, 1))));
  const cellH = models.length > 40 ? 14 : models.length > 12 ? 22 : 28;
  return { labelW, labels, cellW, cellH, totalW: labelW + cellW * epochs, totalH: HEADER_H + cellH * models.length };
}

function ellipsize(ctx: CanvasRenderingContext2D, text: string, max: number): string {
  if (ctx.measureText(text).width <= max) return text;
  let s = text;
  while (s.length > 1 && ctx.measureText(`${s}…`).width > max) s = s.slice(0, -1);
  return `${s}…`;
}

function cellColor(job: Job | undefined, c: ThemeColors): string {
  if (!job) return c['job-pending'];
  switch (job.status) {
    case 'pending':
      return c['job-pending'];
    case 'running':
      return c['job-running-track'];
    case 'done':
      return c['job-done'];
    case 'failed':
      return c['job-failed'];
    case 'cancelled':
      return c['job-cancelled'];
  }
}

interface View {
  left: number;
  top: number;
  width: number;
  height: number;
}

function draw(
  canvas: HTMLCanvasElement,
  table: JobTable,
  layout: Layout,
  view: View,
  colors: ThemeColors,
  marked: ReadonlyArray<{ index: number | null; color: string }>,
): void {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(view.width));
  const h = Math.max(1, Math.round(view.height));
  if (canvas.width !== w * dpr || canvas.height !== h * dpr) {
    canvas.width = w * dpr;
    canvas.height = h * dpr;
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
  }
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = colors.surface;
  ctx.fillRect(0, 0, w, h);

  const { labelW, cellW, cellH } = layout;
  const epochs = table.epochs;
  const rows = table.models.length;
  const gap = cellW >= 12 ? 2 : 1;
  const firstCol = Math.max(0, Math.floor(view.left / cellW));
  const lastCol = Math.min(epochs - 1, Math.floor((view.left + w - labelW) / cellW));
  const firstRow = Math.max(0, Math.floor(view.top / cellH));
  const lastRow = Math.min(rows - 1, Math.floor((view.top + h - HEADER_H) / cellH));
  const cellX = (col: number) => labelW + col * cellW - view.left;
  const cellY = (row: number) => HEADER_H + row * cellH - view.top;

  for (let row = firstRow; row <= lastRow; row++) {
    const y = cellY(row);
    for (let col = firstCol; col <= lastCol; col++) {
      const job = table.cells[row * epochs + col];
      const x = cellX(col);
      const cw = cellW - gap;
      const ch = cellH - gap;
      ctx.fillStyle = cellColor(job, colors);
      ctx.fillRect(x, y, cw, ch);
      if (!job) continue;
      if (job.status === 'running' && job.vignetteCount > 0) {
        ctx.fillStyle = colors['job-running'];
        ctx.fillRect(x, y, Math.max(1, (cw * job.vignettesDone) / job.vignetteCount), ch);
      }
      if (job.attempt > 1 && cw >= 6) {
        const m = Math.min(8, Math.floor(cw / 2));
        ctx.fillStyle = colors['job-retried'];
        ctx.beginPath();
        ctx.moveTo(x + cw - m, y);
        ctx.lineTo(x + cw, y);
        ctx.lineTo(x + cw, y + m);
        ctx.fill();
      }
    }
  }

  for (const { index, color } of marked) {
    if (index === null) continue;
    const row = Math.floor(index / epochs);
    const col = index % epochs;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    ctx.strokeRect(cellX(col) - 1, cellY(row) - 1, cellW - gap + 2, cellH - gap + 2);
  }

  // The model column and the epoch header stay in place while the cells scroll under them.
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  ctx.fillStyle = colors.surface;
  ctx.fillRect(0, 0, labelW, h);
  ctx.fillRect(0, 0, w, HEADER_H);
  ctx.fillStyle = colors.text;
  if (cellH >= 12) {
    for (let row = firstRow; row <= lastRow; row++) {
      ctx.fillText(layout.labels[row]!, 8, cellY(row) + (cellH - gap) / 2);
    }
  }
  ctx.fillStyle = colors.muted;
  const step = Math.max(1, Math.ceil(32 / cellW));
  ctx.save();
  ctx.beginPath();
  ctx.rect(labelW, 0, w - labelW, HEADER_H);
  ctx.clip();
  for (let col = firstCol; col <= lastCol; col++) {
    const epoch = col + 1;
    if (epoch !== 1 && epoch % step !== 0) continue;
    const label = String(epoch);
    const x = cellX(col) + 1;
    if (x + ctx.measureText(label).width > w) break;
    ctx.fillText(label, x, HEADER_H / 2);
  }
  ctx.restore();
  ctx.fillText(CORNER_LABEL, 8, HEADER_H / 2);
}

function JobTooltip({ job }: { job: Job }) {
  return (
    <>
      <div className="tooltip-title">
        {job.model} · epoch {job.epoch}
      </div>
      <div>
        {job.status} · {formatInt(job.vignettesDone)} / {formatInt(job.vignetteCount)} vignettes
      </div>
      <div>
        attempt {job.attempt}
        {job.workerId ? ` · ${job.workerId}` : ''}
      </div>
      {job.error ? <div className="tooltip-error">{job.error}</div> : null}
    </>
  );
}

export interface JobGridProps {
  table: JobTable;
  /** Changes whenever the table does. */
  version: number;
  selected: number | null;
  onSelect: (index: number | null) => void;
}

export const JobGrid = memo(function JobGrid({ table, version, selected, onSelect }: JobGridProps) {
  const colors = useThemeColors();
  const wrapperRef = useRef<HTMLDivElement>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(800);
  const [hover, setHover] = useState<{ index: number; x: number; y: number } | null>(null);
  const layout = useMemo(() => measureLayout(table.models, table.epochs, width), [table.models, table.epochs, width]);
  const viewHeight = Math.min(layout.totalH, MAX_VIEW_H);

  // The scroll position and size, read when they change (scroll, resize) rather than while drawing,
  // since reading them right after React changed the DOM would force a synchronous layout.
  const state = useRef({ table, layout, colors, selected, hovered: null as number | null, frame: 0, view: { left: 0, top: 0, width: 0, height: 0 } });
  state.current.table = table;
  state.current.layout = layout;
  state.current.colors = colors;
  state.current.selected = selected;
  state.current.hovered = hover?.index ?? null;

  const requestDraw = useCallback(() => {
    const s = state.current;
    if (s.frame) return;
    s.frame = requestAnimationFrame(() => {
      s.frame = 0;
      const canvas = canvasRef.current;
      if (!canvas) return;
      draw(
        canvas,
        s.table,
        s.layout,
        s.view,
        s.colors,
        [
          { index: s.hovered, color: s.colors.muted },
          { index: s.selected, color: s.colors.accent },
        ],
      );
    });
  }, []);

  useLayoutEffect(() => {
    const scroller = scrollRef.current;
    if (!scroller) return;
    const measure = () => {
      state.current.view = { left: scroller.scrollLeft, top: scroller.scrollTop, width: scroller.clientWidth, height: scroller.clientHeight };
      setWidth(scroller.clientWidth);
      requestDraw();
    };
    const observer = new ResizeObserver(measure);
    observer.observe(scroller);
    measure();
    return () => {
      observer.disconnect();
      cancelAnimationFrame(state.current.frame);
      state.current.frame = 0;
    };
  }, [requestDraw]);

  useEffect(requestDraw, [requestDraw, version, layout, colors, selected, hover?.index]);

  const cellAt = (clientX: number, clientY: number): number | null => {
    const scroller = scrollRef.current;
    if (!scroller) return null;
    const rect = scroller.getBoundingClientRect();
    const x = clientX - rect.left;
    const y = clientY - rect.top;
    if (x < layout.labelW || y < HEADER_H) return null;
    const col = Math.floor((x - layout.labelW + scroller.scrollLeft) / layout.cellW);
    const row = Math.floor((y - HEADER_H + scroller.scrollTop) / layout.cellH);
    if (col < 0 || col >= table.epochs || row < 0 || row >= table.models.length) return null;
    return row * table.epochs + col;
  };

  /** The arrow keys move the pinned cell and scroll it into view. */
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const current = selected ?? -1;
    const row = current < 0 ? 0 : Math.floor(current / table.epochs);
    const col = current < 0 ? -1 : current % table.epochs;
    let next: number | null;
    switch (e.key) {
      case 'ArrowRight':
        next = current < 0 ? 0 : row * table.epochs + Math.min(col + 1, table.epochs - 1);
        break;
      case 'ArrowLeft':
        next = current < 0 ? 0 : row * table.epochs + Math.max(col - 1, 0);
        break;
      case 'ArrowDown':
        next = current < 0 ? 0 : Math.min(row + 1, table.models.length - 1) * table.epochs + col;
        break;
      case 'ArrowUp':
        next = current < 0 ? 0 : Math.max(row - 1, 0) * table.epochs + col;
        break;
      case 'Home':
        next = row * table.epochs;
        break;
      case 'End':
        next = row * table.epochs + table.epochs - 1;
        break;
      case 'Escape':
        next = null;
        break;
      default:
        return;
    }
    e.preventDefault();
    onSelect(next);
    const scroller = scrollRef.current;
    if (next !== null && scroller) {
      const x = layout.labelW + (next % table.epochs) * layout.cellW;
      const y = HEADER_H + Math.floor(next / table.epochs) * layout.cellH;
      if (x < scroller.scrollLeft + layout.labelW) scroller.scrollLeft = x - layout.labelW;
      else if (x + layout.cellW > scroller.scrollLeft + scroller.clientWidth) scroller.scrollLeft = x + layout.cellW - scroller.clientWidth;
      if (y < scroller.scrollTop + HEADER_H) scroller.scrollTop = y - HEADER_H;
      else if (y + layout.cellH > scroller.scrollTop + scroller.clientHeight) scroller.scrollTop = y + layout.cellH - scroller.clientHeight;
    }
  };

  const hoveredJob = hover ? table.cells[hover.index] : undefined;
  const pending = table.size - table.counts.running - table.counts.done - table.counts.failed - table.counts.cancelled;
  const legend: Array<[string, string, number]> = [
    ['pending', 'Pending', pending],
    ['running', 'Running', table.counts.running],
    ['done', 'Done', table.counts.done],
    ['failed', 'Failed', table.counts.failed],
    ['cancelled', 'Cancelled', table.counts.cancelled],
  ];

  return (
    <div ref={wrapperRef} className="job-grid" data-testid="job-grid">
      <div className="legend" data-testid="job-legend">
        {legend.map(([key, label, count]) => (
          <span key={key} className="legend-item" data-status={key}>
            <span className={`swatch swatch-${key}`} />
            {label} <strong>{formatInt(count)}</strong>
          </span>
        ))}
        <span className="legend-item">
          <span className="swatch swatch-retried" />
          retried
        </span>
      </div>
      <div
        ref={scrollRef}
        className="job-grid-scroll"
        data-cell-origin={`${layout.labelW},${HEADER_H}`}
        data-cell-size={`${layout.cellW},${layout.cellH}`}
        style={{ height: viewHeight, maxWidth: layout.totalW + 2 }}
        onScroll={(e) => {
          const el = e.currentTarget;
          state.current.view = { left: el.scrollLeft, top: el.scrollTop, width: el.clientWidth, height: el.clientHeight };
          requestDraw();
        }}
        onMouseMove={(e) => {
          const index = cellAt(e.clientX, e.clientY);
          const rect = wrapperRef.current!.getBoundingClientRect();
          setHover(index === null ? null : { index, x: e.clientX - rect.left, y: e.clientY - rect.top });
        }}
        onMouseLeave={() => setHover(null)}
        onClick={(e) => onSelect(cellAt(e.clientX, e.clientY))}
        tabIndex={0}
        role="group"
        aria-label="Jobs, one cell per model and epoch: the arrow keys choose a job and show its details, Escape closes them"
        aria-keyshortcuts="ArrowLeft ArrowRight ArrowUp ArrowDown Home End Escape"
        onKeyDown={onKeyDown}
      >
        <div className="job-grid-spacer" style={{ width: layout.totalW, height: layout.totalH }}>
          <canvas
            ref={canvasRef}
            className="job-grid-canvas"
            role="img"
            aria-label={`${table.models.length} models by ${table.epochs} epochs: ${legend.map(([, l, n]) => `${n} ${l.toLowerCase()}`).join(', ')}`}
          />
        </div>
      </div>
      {hover && hoveredJob ? (
        <div className="tooltip" style={{ left: hover.x + 14, top: hover.y + 14 }}>
          <JobTooltip job={hoveredJob} />
        </div>
      ) : null}
    </div>
  );
});
