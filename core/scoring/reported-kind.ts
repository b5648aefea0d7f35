/**
 * The kind a scorer's figures are read as on one run, the same in the report, the score matrix and
 * run comparisons: the kind it declared, except that a code plugin declared graded whose every
 * verdict on the run is a boolean (value 1 with a pass, 0 with a fail) is pass/fail, like a rule
 * with the same verdicts. Whether every verdict is a boolean is kept by the store as verdicts are
 * written (`RunScorer.verdictsBoolean`), so asking costs nothing whatever the run's size.
 * Runs on: Node (core).
 */
import type { ScorerKind } from '../domain.js';
import type { RunScorer } from '../store/score-store.js';

export function reportedKind(rs: Pick<RunScorer, 'kind' | 'layer' | 'verdictsBoolean'>): ScorerKind {
  return rs.kind === 'graded' && rs.layer === 'plugin' && rs.verdictsBoolean === true ? 'pass_fail' : rs.kind;
}
