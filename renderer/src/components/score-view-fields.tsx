/**
 * The two choices every view of scores starts with: which scorer, and how a vignette's epochs are
 * reduced to one value. Results and Compare runs share them, so the two views read alike.
 * Runs on: renderer.
 */
import type { EpochReducer } from '../api/types.js';

export const REDUCERS: Array<{ value: EpochReducer; label: string }> = [
  { value: 'mean', label: 'mean of the epochs' },
  { value: 'majority', label: 'majority of the epochs' },
  { value: 'max', label: 'best epoch' },
];

export function ScorerAndReducerFields(props: {
  /** Prefix of the fields' test ids: `<prefix>-scorer`, `<prefix>-reducer`. */
  testIdPrefix: string;
  names: readonly string[];
  scorer: string;
  onScorer: (name: string) => void;
  reducer: EpochReducer;
  onReducer: (reducer: EpochReducer) => void;
}) {
  return (
    <>
      <label className="inline-field">
        <span>Scorer</span>
        <select data-testid={`${props.testIdPrefix}-scorer`} value={props.scorer} onChange={(e) => props.onScorer(e.target.value)}>
          {props.names.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-field">
        <span>Epochs reduced by</span>
        <select
          data-testid={`${props.testIdPrefix}-reducer`}
          value={props.reducer}
          onChange={(e) => props.onReducer(e.target.value as EpochReducer)}
        >
          {REDUCERS.map((r) => (
            <option key={r.value} value={r.value}>
              {r.label}
            </option>
          ))}
        </select>
      </label>
    </>
  );
}
