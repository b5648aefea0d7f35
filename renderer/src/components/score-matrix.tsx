/**
 * The vignette × model matrix of one scorer: each cell shows the epoch-reduced score and one mark
 * per epoch (passed, failed, partial credit, not scored yet), sortable by vignette, by flip rate
 * (the vignettes a model answers inconsistently first) and by judge disagreement. Rows come from
 * the engine a page at a time, in the order asked for, paged through every vignette of the run (or
 * every one whose id, prompt or metadata holds the search's text); a cell is a button that opens the vignette's
 * responses side by side. While a run is scored, a page in manifest order follows the scores as
 * often as the view refreshes, but a sorted page, which the engine computes over the whole run, at
 * most every few seconds: a large run's flip-rate sort is half a second of the engine's time.
 * Runs on: renderer.
 */
import { useEffect, useState } from 'react';
import { useClient } from '../api/client-context.js';
import type { EpochReducer, MatrixSort, ScoreMatrixCell, ScoreMatrixRow } from '../api/types.js';
import { formatInt } from '../format.js';
import { ErrorNotice } from './notice.js';
import { formatScore } from '../../../core/common/score-format.js';
import { useFetch } from './use-fetch.js';
import { useThrottled } from './use-throttled.js';
import { ScrollRegion } from './scroll-region.js';

const SORTS: Array<{ value: MatrixSort; label: string }> = [
  { value: 'vignette', label: 'manifest order' },
  { value: 'flip_rate', label: 'flip rate (least consistent first)' },
  { value: 'judge_disagreement', label: 'judge disagreement (largest first)' },
];

/** Rows per page of the grid. */
const PAGE_ROWS = 50;
/** While scores land, a sorted page is fetched again at most once per this many ms. */
const SORTED_REFRESH_MS = 5000;
/** Metadata keys shown per row. */
const META_SHOWN = 3;

function markClass(value: number | null): string {
  if (value === null) return 'mark mark-none';
  if (value >= 1) return 'mark mark-pass';
  if (value <= 0) return 'mark mark-fail';
  return 'mark mark-part';
}

function cellLabel(vignetteId: string, cell: ScoreMatrixCell): string {
  const epochs = cell.epochs.map((v, i) => `epoch ${i + 1} ${v === null ? 'not scored' : formatScore(v)}`).join(', ');
  const flip = cell.flipRate === null ? '' : `, flip rate ${formatScore(cell.flipRate)}`;
  const judges = cell.judgeDisagreement === null ? '' : `, judge disagreement ${formatScore(cell.judgeDisagreement)}`;
  return `${cell.model} on ${vignetteId}: ${formatScore(cell.reduced)} (${epochs}${flip}${judges}). Open the responses.`;
}

function MatrixCell({ row, cell, onOpen }: { row: ScoreMatrixRow; cell: ScoreMatrixCell; onOpen: (vignetteId: string) => void }) {
  return (
    <td className="matrix-cell">
      <button
        type="button"
        className="matrix-button"
        data-model={cell.model}
        aria-label={cellLabel(row.vignetteId, cell)}
        onClick={() => onOpen(row.vignetteId)}
      >
        <span className="matrix-value" data-col="reduced">{formatScore(cell.reduced)}</span>
        <span className="marks" aria-hidden="true">
          {cell.epochs.map((v, i) => (
            <span key={i} className={markClass(v)} />
          ))}
        </span>
        {cell.flipRate !== null && cell.flipRate > 0 ? <span className="matrix-note">flip {formatScore(cell.flipRate)}</span> : null}
        {cell.judgeDisagreement !== null ? <span className="matrix-note">judges ±{formatScore(cell.judgeDisagreement)}</span> : null}
      </button>
    </td>
  );
}

function metadataChips(metadata: Record<string, unknown> | undefined) {
  if (!metadata) return null;
  const entries = Object.entries(metadata).slice(0, META_SHOWN);
  if (entries.length === 0) return null;
  return (
    <span className="chips">
      {entries.map(([k, v]) => (
        <span key={k} className="chip" dir="auto">
          {k}: {typeof v === 'string' ? v : JSON.stringify(v)}
        </span>
      ))}
    </span>
  );
}

export function ScoreMatrix({
  runId,
  scorer,
  reducer,
  refresh,
  onOpen,
}: {
  runId: string;
  scorer: string;
  /** How each cell's epochs reduce to its one value, as in the leaderboard. */
  reducer: EpochReducer;
  /** Changes when new scores may have landed: the rows on screen are fetched again. */
  refresh: number;
  onOpen: (vignetteId: string) => void;
}) {
  const client = useClient();
  const [sort, setSort] = useState<MatrixSort>('vignette');
  const [cursor, setCursor] = useState(0);
  const [searchInput, setSearchInput] = useState('');
  const [search, setSearch] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSearch(searchInput.trim()), 300);
    return () => clearTimeout(timer);
  }, [searchInput]);
  // A new order or search starts at the first page.
  useEffect(() => setCursor(0), [runId, scorer, sort, search]);
  const sortedRefresh = useThrottled(refresh, SORTED_REFRESH_MS);
  const page = useFetch(
    () => client.call('scoreMatrix', { runId, scorer, reducer, sort, limit: PAGE_ROWS, cursor, ...(search === '' ? {} : { search }) }),
    [client, runId, scorer, reducer, sort, cursor, search, sort === 'vignette' && search === '' ? refresh : sortedRefresh],
  );
  const data = page.data;
  return (
    <div className="score-matrix" data-testid="score-matrix">
      <div className="filters">
        <label className="inline-field">
          <span>Sort by</span>
          <select data-testid="matrix-sort" value={sort} onChange={(e) => setSort(e.target.value as MatrixSort)}>
            {SORTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-field">
          <span>Search</span>
          <input
            type="search"
            data-testid="matrix-search"
            placeholder="vignette id, prompt or metadata"
            value={searchInput}
            onChange={(e) => setSearchInput(e.target.value)}
          />
        </label>
        <span className="muted small legend">
          <span className="legend-item"><span className="mark mark-pass" aria-hidden="true" /> 1</span>
          <span className="legend-item"><span className="mark mark-part" aria-hidden="true" /> between</span>
          <span className="legend-item"><span className="mark mark-fail" aria-hidden="true" /> 0</span>
          <span className="legend-item"><span className="mark mark-none" aria-hidden="true" /> not scored yet</span>
          <span>one mark per epoch</span>
        </span>
      </div>
      <ErrorNotice error={page.error} title="Could not load the matrix" />
      {data ? (
        <>
          <ScrollRegion label="Vignettes by model" className="matrix-scroll">
            <table className="table compact matrix-table" data-testid="matrix-table">
              <caption className="visually-hidden">Reduced score and one mark per epoch, for each vignette and model</caption>
              <thead>
                <tr>
                  <th scope="col">Vignette</th>
                  {data.models.map((m) => (
                    <th key={m} scope="col">
                      {m}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {data.rows.map((row) => (
                  <tr key={row.vignetteId} data-vignette={row.vignetteId}>
                    <th scope="row" className="matrix-vignette">
                      <span className="mono" dir="auto">
                        {row.vignetteId}
                      </span>
                      {metadataChips(row.metadata)}
                    </th>
                    {row.cells.map((cell) => (
                      <MatrixCell key={cell.model} row={row} cell={cell} onOpen={onOpen} />
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
          <div className="grid-pager pad" role="group" aria-label="Pages of vignettes">
            <button type="button" className="button small" data-testid="matrix-prev" disabled={cursor === 0} onClick={() => setCursor((c) => Math.max(0, c - PAGE_ROWS))}>
              Previous
            </button>
            <span className="muted small" data-testid="matrix-count">
              {data.rows.length === 0
                ? search === ''
                  ? 'No vignettes'
                  : `No vignette matches “${search}”`
                : `${formatInt(cursor + 1)}–${formatInt(cursor + data.rows.length)} of ${formatInt(data.total)} ${search === '' ? 'vignettes' : `vignettes matching “${search}”`}`}
            </span>
            <button type="button" className="button small" data-testid="matrix-next" disabled={data.nextCursor === null} onClick={() => setCursor(data.nextCursor ?? cursor)}>
              Next
            </button>
          </div>
        </>
      ) : page.loading ? (
        <p className="muted">Loading the matrix…</p>
      ) : null}
    </div>
  );
}
