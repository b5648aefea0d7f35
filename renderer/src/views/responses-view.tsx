/**
 * Responses: a run's records in a virtualised table (vignette, model, epoch, response, tokens,
 * cost at the run's kept prices, latency, and a column per scorer), filtered by model, epoch,
 * text, failures, scorer and metadata field and sorted by a column, all by the store, read page by
 * page as the table scrolls (a run may hold millions of records; only the rows in view exist in
 * the page). A click on a record, or Enter on a focused one (arrow keys move between them), shows
 * that vignette's responses side by side: models down, epochs across, scrolled to and focused,
 * each answer's differences from a chosen one highlighted word by word.
 * Runs on: renderer.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type CSSProperties } from 'react';
import { useHiddenSides } from '../components/scroll-region.js';
import { useClient } from '../api/client-context.js';
import type { ResponseScorerColumn, ResponsesInput, RunSummary, ScoredResponse } from '../api/types.js';
import { AnswerDiff } from '../components/answer-diff.js';
import { useDiffReference } from '../components/diff-reference.js';
import { EmptyState, ErrorNotice } from '../components/notice.js';
import { NO_SEARCH, ScoreCell, SearchFields, SortHeader, searchQuery, type SearchFilters } from '../components/response-search.js';
import { PromptBox } from '../components/prompt-box.js';
import { RunPicker } from '../components/run-picker.js';
import { useFetch } from '../components/use-fetch.js';
import { useRuns } from '../components/use-runs.js';
import { formatCallCost, formatInt } from '../format.js';
import { useAppStore } from '../state/app-store.js';
import { navigate } from '../state/hash-routes.js';
import { sideBySide } from '../../../core/common/side-by-side.js';

const PAGE = 200;
const ROW_H = 36;
/** Load the next page when the view comes this close (rows) to the end of what is loaded. */
const PREFETCH_ROWS = 40;
const EPOCH_SELECT_MAX = 200;

interface Filters {
  model: string;
  epoch: string;
  text: string;
  search: SearchFilters;
}

const NO_FILTERS: Filters = { model: '', epoch: '', text: '', search: NO_SEARCH };

interface Loaded {
  key: string;
  items: ScoredResponse[];
  /** Where the next page starts (the last record's seq: keyset paging in any order); null at the end. */
  nextAfter: number | null;
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

function queryOf(runId: string, filters: Filters, scorers: readonly ResponseScorerColumn[]): Omit<ResponsesInput, 'cursor' | 'after' | 'limit'> {
  const q: Omit<ResponsesInput, 'cursor' | 'after' | 'limit'> = { runId, ...searchQuery(filters.search, scorers) };
  if (filters.model !== '') q.model = filters.model;
  if (/^\d+$/.test(filters.epoch) && Number(filters.epoch) >= 1) q.epoch = Number(filters.epoch);
  if (filters.text.trim() !== '') q.text = filters.text.trim();
  return q;
}

/** Pages of records for one query; a new query starts over, and a late page of an old query is dropped. */
function useRecordPages(query: Omit<ResponsesInput, 'cursor' | 'after' | 'limit'> | null) {
  const client = useClient();
  const resync = useAppStore((s) => s.resync);
  const key = query === null ? '' : `${JSON.stringify(query)}#${resync}`;
  const [loaded, setLoaded] = useState<Loaded>({ key: '', items: [], nextAfter: null, loading: false, error: null });
  const current = useRef(loaded);
  current.current = loaded;

  const fetchPage = useCallback(
    (after: number | undefined) => {
      if (query === null) return;
      setLoaded((l) => ({ ...l, key, loading: true, ...(after === undefined ? { items: [], nextAfter: null } : {}) }));
      client.call('responses', { ...query, limit: PAGE, after }).then(
        (page) => {
          if (current.current.key !== key) return;
          setLoaded((l) => ({
            key,
            items: after === undefined ? page.items : [...l.items, ...page.items],
            nextAfter: page.nextAfter,
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
    if (l.loading || l.nextAfter === null || l.key !== key) return;
    fetchPage(l.nextAfter);
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
  const table = sideBySide(records, run.models);
  const { epochs } = table;
  const first = records[0];
  const firstModel = first ? run.models.find((m) => table.cell(m, epochs[0]!).length > 0) : undefined;
  const diff = useDiffReference(records, firstModel === undefined ? null : { model: firstModel, epoch: epochs[0]! });
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
          <span className="mono" dir="auto">
            {vignetteId}
          </span>{' '}
          — every model and epoch
        </h2>
        <button type="button" className="button small" onClick={onClose}>
          Close
        </button>
      </header>
      <ErrorNotice error={fetched.error} />
      {first ? (
        <PromptBox vignette={first} />
      ) : null}
      {diff.picker}
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
                  const r = table.cell(model, e).at(-1);
                  const isReference = diff.isReference(model, e);
                  return (
                    <td key={e} className={`sbs-cell${isReference ? ' sbs-reference' : ''}`}>
                      {r ? (
                        <>
                          <AnswerDiff text={r.response} against={isReference ? null : diff.referenceText} />
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

function RecordsTable({
  run,
  filters,
  scorers,
  onSearch,
  onOpen,
}: {
  run: RunSummary;
  filters: Filters;
  scorers: readonly ResponseScorerColumn[];
  onSearch: (next: SearchFilters) => void;
  onOpen: (vignetteId: string) => void;
}) {
  const query = queryOf(run.id, filters, scorers);
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

  const unfiltered = Object.keys(query).every((k) => k === 'runId' || k === 'sort' || k === 'order' || k === 'scorer');
  // One column per scorer after the table's own (app.css sizes both for the window's width).
  const columns = scorers.length === 0 ? undefined : ({ '--score-columns': String(scorers.length) } as CSSProperties);
  const sortProps = { value: filters.search, onChange: onSearch };
  const cardRef = useRef<HTMLDivElement>(null);
  const hidden = useHiddenSides(cardRef, `${scorers.length}:${items.length > 0}`);
  // The row the keyboard is on, its ids shown whole below the table (a cell cuts them; its title shows only to a mouse).
  const [focused, setFocused] = useState<{ vignetteId: string; model: string; epoch: number } | null>(null);
  return (
    <div className="scroll-frame" data-hidden={hidden}>
    <div ref={cardRef} className="card table-card" role="table" aria-label="Responses" aria-rowcount={unfiltered ? run.calls : -1}>
      <div className="records-status muted small" data-testid="records-status">
        {pages.error ? null : pages.loading && items.length === 0 ? 'Loading…' : `${formatInt(items.length)} loaded`}
        {unfiltered ? ` of ${formatInt(run.calls)} records` : pages.nextAfter !== null ? ', more below' : ' (all matches)'}
      </div>
      <ErrorNotice error={pages.error} />
      <div className="records-head records-row" role="row" style={columns}>
        <SortHeader label="Vignette" sortKey="vignette" {...sortProps} />
        <SortHeader label="Model" sortKey="model" {...sortProps} />
        <SortHeader label="Epoch" sortKey="epoch" className="num" {...sortProps} />
        <span role="columnheader">Response</span>
        <SortHeader label="Tokens in / out" sortKey="tokens" className="num" {...sortProps} />
        <span role="columnheader" className="num">
          Cost
        </span>
        <SortHeader label="Latency" sortKey="latency" className="num" {...sortProps} />
        {scorers.map((s) => (
          <SortHeader key={s.version} label={s.name} sortKey="score" scorer={s.version} className="score-head" {...sortProps} />
        ))}
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
                onFocus={() => setFocused({ vignetteId: r.vignetteId, model: r.model, epoch: r.epoch })}
                onBlur={() => setFocused(null)}
                aria-label={`${r.vignetteId}, ${r.model}, epoch ${r.epoch}: open every model and epoch of this vignette`}
                style={{ transform: `translateY(${row.start}px)`, height: ROW_H, ...columns }}
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
                <span role="cell" className="mono ellipsis" title={r.vignetteId} data-full-id={r.vignetteId} dir="auto">
                  {r.vignetteId}
                </span>
                <span role="cell" className="ellipsis" title={r.model} data-full-id={r.model}>
                  {r.model}
                </span>
                <span role="cell" className="num">
                  {r.epoch}
                </span>
                <span role="cell" className="ellipsis" title={r.response} dir="auto">
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
                {scorers.map((s, i) => (
                  <ScoreCell key={s.version} cell={r.scores[i]} column={s} />
                ))}
              </div>
            );
          })}
        </div>
      </div>
      <p className="muted small records-focused" data-testid="focused-record" hidden={focused === null}>
        {focused ? (
          <>
            <span className="mono" dir="auto">
              {focused.vignetteId}
            </span>{' '}
            · {focused.model} · epoch {focused.epoch}
          </>
        ) : null}
      </p>
    </div>
    {hidden === 'right' || hidden === 'both' ? (
      <span className="scroll-cue" data-testid="scroll-cue" title="More columns to the right: scroll sideways" aria-hidden="true">
        ›
      </span>
    ) : null}
    </div>
  );
}

export function ResponsesView({ runId }: { runId: string | null }) {
  const { runs, loaded } = useRuns();
  const run = useAppStore((s) => (runId === null ? undefined : s.runs[runId]));
  const client = useClient();
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  // The run's scorers (the score columns), from a one-record page: the search needs them before the table's first page.
  const scorerPage = useFetch(() => (runId === null ? Promise.resolve(null) : client.call('responses', { runId, limit: 1 })), [client, runId]);
  const scorers = scorerPage.data?.scorers ?? [];
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
    setFilters(NO_FILTERS);
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
          <SearchFields value={filters.search} scorers={scorers} onChange={(search) => setFilters((f) => ({ ...f, search }))} />
          <RecordsTable
            run={run}
            filters={filters}
            scorers={scorers}
            onSearch={(search) => setFilters((f) => ({ ...f, search }))}
            onOpen={openVignette}
          />
          {vignette ? <SideBySide run={run} vignetteId={vignette} onClose={closeVignette} /> : null}
        </>
      ) : runId !== null ? (
        <p className="muted">Loading the run…</p>
      ) : null}
    </section>
  );
}
