/**
 * Responses: a run's records in a virtualised table (vignette, model, epoch, response, tokens,
 * cost at the run's kept prices, latency), filtered by model, epoch and text, read page by page with the store's keyset cursor
 * as the table scrolls (a run may hold millions of records; only the rows in view exist in the
 * page). A click on a record, or Enter on a focused one (arrow keys move between them), shows that
 * vignette's responses side by side: models down, epochs across, scrolled to and focused.
 * Runs on: renderer.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useClient } from '../api/client-context.js';
import type { PricedResponse, ResponsesInput, RunSummary } from '../api/types.js';
import { EmptyState, ErrorNotice } from '../components/notice.js';
import { PromptBox } from '../components/prompt-box.js';
import { RunPicker } from '../components/run-picker.js';
import { useFetch } from '../components/use-fetch.js';
import { useRuns } from '../components/use-runs.js';
import { formatCallCost, formatInt } from '../format.js';
import { useAppStore } from '../state/app-store.js';
import { navigate } from '../state/hash-routes.js';

const PAGE = 200;
const ROW_H = 36;
/** Load the next page when the view comes this close (rows) to the end of what is loaded. */
const PREFETCH_ROWS = 40;
const EPOCH_SELECT_MAX = 200;

interface Filters {
  model: string;
  epoch: string;
  text: string;
}

interface Loaded {
  key: string;
  items: PricedResponse[];
  nextCursor: number | null;
  loading: boolean;
  error: Error | null;
}

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

function queryOf(runId: string, filters: Filters): Omit<ResponsesInput, 'cursor' | 'limit'> {
  const q: Omit<ResponsesInput, 'cursor' | 'limit'> = { runId };
  if (filters.model !== '') q.model = filters.model;
  if (/^\d+$/.test(filters.epoch) && Number(filters.epoch) >= 1) q.epoch = Number(filters.epoch);
  if (filters.text.trim() !== '') q.text = filters.text.trim();
  return q;
}

/** Pages of records for one query; a new query starts over, and a late page of an old query is dropped. */
function useRecordPages(query: Omit<ResponsesInput, 'cursor' | 'limit'> | null) {
  const client = useClient();
  const resync = useAppStore((s) => s.resync);
  const key = query === null ? '' : `${JSON.stringify(query)}#${resync}`;
  const [loaded, setLoaded] = useState<Loaded>({ key: '', items: [], nextCursor: null, loading: false, error: null });
  const current = useRef(loaded);
  current.current = loaded;

  const fetchPage = useCallback(
    (cursor: number | undefined) => {
      if (query === null) return;
      setLoaded((l) => ({ ...l, key, loading: true, ...(cursor === undefined ? { items: [], nextCursor: null } : {}) }));
      client.call('responses', { ...query, limit: PAGE, cursor }).then(
        (page) => {
          if (current.current.key !== key) return;
          setLoaded((l) => ({
            key,
            items: cursor === undefined ? page.items : [...l.items, ...page.items],
            nextCursor: page.nextCursor,
            loading: false,
            error: null,
          }));
        },
        (err: unknown) => {
          if (current.current.key !== key) return;
          setLoaded((l) => ({ ...l, loading: false, error: err as Error }));
        },
      );
    },
    // `key` stands for the query (and the resync): a new key is a new query.
    [client, key],
  );

  useEffect(() => fetchPage(undefined), [fetchPage]);

  const loadMore = useCallback(() => {
    const l = current.current;
    if (l.loading || l.nextCursor === null || l.key !== key) return;
    fetchPage(l.nextCursor);
  }, [fetchPage, key]);

  return { ...loaded, stale: loaded.key !== key, loadMore };
}

function SideBySide({ run, vignetteId, onClose }: { run: RunSummary; vignetteId: string; onClose: () => void }) {
  const client = useClient();
  const panel = useRef<HTMLDivElement>(null);
  // Opened from a row, the panel comes into view and takes the focus, so a keyboard or screen reader user lands in it.
  useEffect(() => {
    panel.current?.scrollIntoView({ block: 'start' });
    panel.current?.focus({ preventScroll: true });
  }, [vignetteId]);
  const fetched = useFetch(() => client.call('responses', { runId: run.id, vignetteId, limit: 1000 }), [client, run.id, vignetteId]);
  const records = fetched.data?.items ?? [];
  const byCell = new Map(records.map((r) => [`${r.model}\u0000${r.epoch}`, r]));
  const epochs = [...new Set(records.map((r) => r.epoch))].sort((a, b) => a - b);
  const first = records[0];
  return (
    <div
      className="card side-by-side"
      data-testid="side-by-side"
      ref={panel}
      tabIndex={-1}
      role="region"
      aria-labelledby="side-by-side-title"
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose();
      }}
    >
      <header className="card-header">
        <h2 className="h3" id="side-by-side-title">
          <span className="mono">{vignetteId}</span> — every model and epoch
        </h2>
        <button type="button" className="button small" onClick={onClose}>
          Close
        </button>
      </header>
      <ErrorNotice error={fetched.error} />
      {first ? (
        <PromptBox vignette={first} />
      ) : null}
      {fetched.data?.nextCursor !== null && fetched.data ? (
        <p className="muted small">Showing the first {formatInt(records.length)} records of this vignette.</p>
      ) : null}
      <div className="sbs-scroll">
        <table className="table sbs-table">
          <thead>
            <tr>
              <th scope="col">Model</th>
              {epochs.map((e) => (
                <th scope="col" key={e}>
                  Epoch {e}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {run.models.map((model) => (
              <tr key={model}>
                <th scope="row" className="nowrap">
                  {model}
                </th>
                {epochs.map((e) => {
                  const r = byCell.get(`${model}\u0000${e}`);
                  return (
                    <td key={e} className="sbs-cell">
                      {r ? (
                        <>
                          <div className="sbs-text">{r.response}</div>
                          <div className="muted small">
                            {formatInt(r.usage.inputTokens)} in · {formatInt(r.usage.outputTokens)} out · {formatInt(Math.round(r.latencyMs))} ms
                            {r.cached ? ' · cached' : ''} · {formatCallCost(r)}
                          </div>
                        </>
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function RecordsTable({ run, filters, onOpen }: { run: RunSummary; filters: Filters; onOpen: (vignetteId: string) => void }) {
  const query = queryOf(run.id, filters);
  const pages = useRecordPages(query);
  const scrollRef = useRef<HTMLDivElement>(null);
  const items = pages.stale ? [] : pages.items;
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_H,
    overscan: 12,
  });
  const virtualRows = virtualizer.getVirtualItems();
  const lastIndex = virtualRows[virtualRows.length - 1]?.index ?? -1;

  useEffect(() => {
    if (lastIndex >= items.length - PREFETCH_ROWS) pages.loadMore();
  }, [lastIndex, items.length, pages]);

  /**
   * The row the arrow keys asked for that is not rendered yet: rows outside the view do not exist
   * until the virtualizer has scrolled to them, so it is focused by the render that brings it. (A
   * focus deferred to the next frame instead could land after Enter had opened the side-by-side
   * panel, and take the focus back from it.)
   */
  const pendingFocus = useRef<number | null>(null);
  const rowElement = (index: number) => scrollRef.current?.querySelector<HTMLElement>(`[data-index="${index}"]`) ?? null;
  useLayoutEffect(() => {
    if (pendingFocus.current === null) return;
    const row = rowElement(pendingFocus.current);
    if (row === null) return;
    pendingFocus.current = null;
    row.focus();
  });

  /** Moves the focus to a row: now when it is rendered, else once the virtualizer has scrolled it into existence. */
  const focusRow = (index: number) => {
    if (index < 0 || index >= items.length) return;
    virtualizer.scrollToIndex(index);
    const row = rowElement(index);
    pendingFocus.current = row === null ? index : null;
    row?.focus();
  };

  /** Opening a vignette gives the focus to its panel: a row still waiting for the focus gives it up. */
  const open = (vignetteId: string) => {
    pendingFocus.current = null;
    onOpen(vignetteId);
  };

  const unfiltered = query.model === undefined && query.epoch === undefined && query.text === undefined;
  return (
    <div className="card table-card" role="table" aria-label="Responses" aria-rowcount={unfiltered ? run.calls : -1}>
      <div className="records-status muted small" data-testid="records-status">
        {pages.error ? null : pages.loading && items.length === 0 ? 'Loading…' : `${formatInt(items.length)} loaded`}
        {unfiltered ? ` of ${formatInt(run.calls)} records` : pages.nextCursor !== null ? ', more below' : ' (all matches)'}
      </div>
      <ErrorNotice error={pages.error} />
      <div className="records-head records-row" role="row">
        <span role="columnheader">Vignette</span>
        <span role="columnheader">Model</span>
        <span role="columnheader" className="num">
          Epoch
        </span>
        <span role="columnheader">Response</span>
        <span role="columnheader" className="num">
          Tokens in / out
        </span>
        <span role="columnheader" className="num">
          Cost
        </span>
        <span role="columnheader" className="num">
          Latency
        </span>
      </div>
      <div ref={scrollRef} className="records-scroll" data-testid="records-scroll" role="rowgroup">
        {items.length === 0 && !pages.loading && !pages.error ? (
          <p className="muted pad">No records match.</p>
        ) : null}
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualRows.map((row) => {
            const r = items[row.index]!;
            return (
              <div
                key={r.seq}
                className="records-row record clickable"
                data-testid="record-row"
                data-seq={r.seq}
                role="row"
                aria-rowindex={row.index + 1}
                data-index={row.index}
                tabIndex={0}
                aria-label={`${r.vignetteId}, ${r.model}, epoch ${r.epoch}: open every model and epoch of this vignette`}
                style={{ transform: `translateY(${row.start}px)`, height: ROW_H }}
                onClick={() => open(r.vignetteId)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' || e.key === ' ') {
                    e.preventDefault();
                    open(r.vignetteId);
                  } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
                    e.preventDefault();
                    focusRow(row.index + (e.key === 'ArrowDown' ? 1 : -1));
                  }
                }}
              >
                <span role="cell" className="mono ellipsis" title={r.vignetteId}>
                  {r.vignetteId}
                </span>
                <span role="cell" className="ellipsis">
                  {r.model}
                </span>
                <span role="cell" className="num">
                  {r.epoch}
                </span>
                <span role="cell" className="ellipsis" title={r.response}>
                  {r.response}
                </span>
                <span role="cell" className="num">
                  {formatInt(r.usage.inputTokens)} / {formatInt(r.usage.outputTokens)}
                </span>
                <span role="cell" className="num ellipsis" data-testid="record-cost" title={formatCallCost(r)}>
                  {formatCallCost(r)}
                </span>
                <span role="cell" className="num">
                  {formatInt(Math.round(r.latencyMs))} ms
                </span>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}

export function ResponsesView({ runId }: { runId: string | null }) {
  const { runs, loaded } = useRuns();
  const run = useAppStore((s) => (runId === null ? undefined : s.runs[runId]));
  const [filters, setFilters] = useState<Filters>({ model: '', epoch: '', text: '' });
  const [textInput, setTextInput] = useState('');
  const text = useDebounced(textInput, 300);
  const [vignette, setVignette] = useState<string | null>(null);
  /** Where the focus was when a vignette opened (its row): closing the panel gives it back there. */
  const openedFrom = useRef<HTMLElement | null>(null);
  const openVignette = (id: string) => {
    openedFrom.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    setVignette(id);
  };
  const closeVignette = () => {
    setVignette(null);
    const back = openedFrom.current;
    openedFrom.current = null;
    if (back?.isConnected) back.focus();
  };

  useEffect(() => setFilters((f) => (f.text === text ? f : { ...f, text })), [text]);
  useEffect(() => {
    setFilters({ model: '', epoch: '', text: '' });
    setTextInput('');
    setVignette(null);
  }, [runId]);
  // With no run chosen, show the newest.
  useEffect(() => {
    if (runId === null && runs[0]) navigate({ view: 'responses', runId: runs[0].id });
  }, [runId, runs]);

  return (
    <section className="view">
      <header className="view-header">
        <h1>Responses</h1>
        <RunPicker runs={runs} value={runId} onChange={(id) => id && navigate({ view: 'responses', runId: id })} />
      </header>
      {loaded && runs.length === 0 ? <EmptyState title="No runs yet" /> : null}
      {run ? (
        <>
          <div className="filters" data-testid="filters">
            <label className="inline-field">
              <span>Model</span>
              <select data-testid="filter-model" value={filters.model} onChange={(e) => setFilters({ ...filters, model: e.target.value })}>
                <option value="">All models</option>
                {run.models.map((m) => (
                  <option key={m} value={m}>
                    {m}
                  </option>
                ))}
              </select>
            </label>
            <label className="inline-field">
              <span>Epoch</span>
              {run.epochs <= EPOCH_SELECT_MAX ? (
                <select data-testid="filter-epoch" value={filters.epoch} onChange={(e) => setFilters({ ...filters, epoch: e.target.value })}>
                  <option value="">All epochs</option>
                  {Array.from({ length: run.epochs }, (_, i) => (
                    <option key={i + 1} value={String(i + 1)}>
                      {i + 1}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  type="number"
                  min={1}
                  max={run.epochs}
                  placeholder="all"
                  data-testid="filter-epoch"
                  value={filters.epoch}
                  onChange={(e) => setFilters({ ...filters, epoch: e.target.value })}
                />
              )}
            </label>
            <label className="inline-field grow">
              <span>Text</span>
              <input
                type="search"
                placeholder="in the response, the prompt or the vignette id"
                data-testid="filter-text"
                value={textInput}
                onChange={(e) => setTextInput(e.target.value)}
              />
            </label>
          </div>
          <RecordsTable run={run} filters={filters} onOpen={openVignette} />
          {vignette ? <SideBySide run={run} vignetteId={vignette} onClose={closeVignette} /> : null}
        </>
      ) : runId !== null ? (
        <p className="muted">Loading the run…</p>
      ) : null}
    </section>
  );
}
