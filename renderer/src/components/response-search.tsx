/**
 * The Responses view's search beyond model, epoch and text: failures only (from one scorer or
 * any), a metadata field with its value, and the sort (a column or a scorer, up or down); the
 * column headers that sort when clicked; and the score cell of a record (pass, fail with its
 * severity, or a graded value). The store does the searching: these only say what to ask for.
 * Runs on: renderer.
 */
import type { ResponseScoreCell, ResponseScorerColumn, ResponsesInput } from '../api/types.js';
import { formatScore } from '../../../core/common/score-format.js';

export type SortKey = NonNullable<ResponsesInput['sort']>;

export interface SearchFilters {
  failuresOnly: boolean;
  /** A scorer's version ('' for every scorer): whose failures show, and whose value `score` sorts by. */
  scorer: string;
  metaKey: string;
  metaValue: string;
  sort: SortKey;
  desc: boolean;
}

export const NO_SEARCH: SearchFilters = { failuresOnly: false, scorer: '', metaKey: '', metaValue: '', sort: 'seq', desc: false };

/** The search's part of a `responses` query. */
export function searchQuery(f: SearchFilters, scorers: readonly ResponseScorerColumn[]): Partial<ResponsesInput> {
  const q: Partial<ResponsesInput> = {};
  const scorer = f.scorer !== '' ? f.scorer : f.sort === 'score' ? scorers[0]?.version : undefined;
  if (scorer !== undefined) q.scorer = scorer;
  if (f.failuresOnly) q.verdict = 'fail';
  if (f.metaKey.trim() !== '') {
    q.metaKey = f.metaKey.trim();
    if (f.metaValue !== '') q.metaValue = f.metaValue;
  }
  if (f.sort !== 'seq' && !(f.sort === 'score' && scorer === undefined)) q.sort = f.sort;
  if (f.desc) q.order = 'desc';
  return q;
}

export function SearchFields({
  value,
  scorers,
  onChange,
}: {
  value: SearchFilters;
  scorers: readonly ResponseScorerColumn[];
  onChange: (next: SearchFilters) => void;
}) {
  const set = (patch: Partial<SearchFilters>) => onChange({ ...value, ...patch });
  return (
    <div className="filters answer-search" data-testid="search-filters">
      <label className="inline-field">
        <input type="checkbox" data-testid="filter-failures" checked={value.failuresOnly} onChange={(e) => set({ failuresOnly: e.target.checked })} />
        <span>Failures only</span>
      </label>
      <label className="inline-field">
        <span>Scorer</span>
        <select data-testid="filter-scorer" value={value.scorer} onChange={(e) => set({ scorer: e.target.value })} disabled={scorers.length === 0}>
          <option value="">{scorers.length === 0 ? 'No scorers' : 'Every scorer'}</option>
          {scorers.map((s) => (
            <option key={s.version} value={s.version}>
              {s.name}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-field">
        <span>Metadata</span>
        <input type="text" className="meta-key" placeholder="key" data-testid="filter-meta-key" value={value.metaKey} onChange={(e) => set({ metaKey: e.target.value })} />
        <input
          type="text"
          className="meta-value"
          placeholder="value (any)"
          aria-label="Metadata value"
          data-testid="filter-meta-value"
          value={value.metaValue}
          onChange={(e) => set({ metaValue: e.target.value })}
        />
      </label>
    </div>
  );
}

/** A column header that sorts the records by its column: a click sorts up, a second down, a third back to landing order. */
export function SortHeader({
  label,
  sortKey,
  value,
  onChange,
  className,
  scorer,
}: {
  label: string;
  sortKey: SortKey;
  value: SearchFilters;
  onChange: (next: SearchFilters) => void;
  className?: string;
  /** For a score column: the scorer it sorts by. */
  scorer?: string;
}) {
  const active = value.sort === sortKey && (scorer === undefined || value.scorer === scorer || (value.scorer === '' && scorer === ''));
  const next = (): SearchFilters => {
    const base = scorer === undefined ? value : { ...value, scorer };
    if (!active) return { ...base, sort: sortKey, desc: false };
    return value.desc ? { ...base, sort: 'seq', desc: false } : { ...base, desc: true };
  };
  return (
    <span role="columnheader" className={className} aria-sort={active ? (value.desc ? 'descending' : 'ascending') : 'none'}>
      <button type="button" className="sort-header" data-testid={`sort-${scorer ?? sortKey}`} onClick={() => onChange(next())}>
        {label}
        <span aria-hidden="true" className="sort-mark">
          {active ? (value.desc ? ' ▼' : ' ▲') : ''}
        </span>
      </button>
    </span>
  );
}

/** One scorer's verdict on a record: pass or fail (with a hard or soft severity), or a graded value. */
export function ScoreCell({ cell, column }: { cell: ResponseScoreCell | null | undefined; column: ResponseScorerColumn }) {
  if (!cell) {
    return (
      <span role="cell" className="score-cell muted" title={`${column.name}: not scored yet`}>
        —
      </span>
    );
  }
  const severity = cell.severity === 'none' ? '' : ` (${cell.severity})`;
  if (cell.passed === null) {
    return (
      <span role="cell" className="score-cell num" data-testid="score-cell" title={`${column.name}: ${formatScore(cell.value)}${severity}`}>
        {formatScore(cell.value)}
      </span>
    );
  }
  return (
    <span
      role="cell"
      className={`score-cell ${cell.passed ? 'score-pass' : 'score-fail'}${cell.severity === 'hard' ? ' score-hard' : ''}`}
      data-testid="score-cell"
      data-passed={String(cell.passed)}
      title={`${column.name}: ${cell.passed ? 'pass' : 'fail'}${severity}`}
    >
      {cell.passed ? '✓ pass' : `✗ ${cell.severity === 'none' ? 'fail' : cell.severity}`}
    </span>
  );
}
