/**
 * The readable form of a score report, as plain text lines for `panoptes report` and `npm run demo`:
 * the leaderboard (model, n, mean, 95 % CI, flip rate, pass@K and pass^K), the models that flip
 * between epochs, every pair with its difference, interval, p-values (raw and Holm) and minimum
 * detectable difference, and whether the data tell the two apart; with `by`, the leaderboard of
 * each slice. The JSON form (`--json`) is the ScoreReport itself.
 * Runs on: Node (core); pure.
 */
import { pairVerdictText } from '../common/pair-verdict.js';
import { formatDiff, formatInterval, formatPValue, formatScore, TEXT_STYLE } from '../common/score-format.js';
import { alignColumns } from '../text-table.js';
import { formatDecision } from './format-decision.js';
import { MIN_VIGNETTES_TO_COMPARE, type ModelScore, type PairComparison, type RunComparison, type ScoreReport } from './report-shape.js';

/** The verdict rule under a pair table; `clustered` adds the rule a clustering brings. */
export function verdictNote(clustered: boolean): string {
  const clusters = clustered ? '; clustered over fewer than about four even clusters, too few clusters to compare' : '';
  return `better: the Holm-adjusted p of the test shown is below 0.05 (across every pair above); otherwise not distinguishable; under ${MIN_VIGNETTES_TO_COMPARE} shared vignettes, too few to compare${clusters}.`;
}

/** p-values by the one rule of every surface (core/common/score-format.ts) in the text style, "n/a" when there is none. */
export function formatP(p: number | null): string {
  return formatPValue(p, TEXT_STYLE);
}

function leaderboard(models: readonly ModelScore[], report: ScoreReport): string[] {
  const K = report.epochs;
  const passFail = report.kind === 'pass_fail';
  const consistency = passFail && K >= 2;
  const gaps = models.some((m) => m.not_scored > 0);
  const header = ['model', 'n', 'mean', '95 % CI'];
  if (gaps) header.push('not scored');
  if (consistency) header.push('flip rate', `pass@${K}`, `pass^${K}`);
  const rows = [header];
  for (const m of models) {
    const row = [m.model, String(m.n), formatScore(m.mean, TEXT_STYLE), m.role === 'baseline' ? 'baseline' : formatInterval(m.ci95, false, TEXT_STYLE)];
    if (gaps) row.push(m.not_scored === 0 ? '0' : `${m.not_scored} (${(100 * m.not_scored_share).toFixed(1)} %)`);
    if (consistency) {
      row.push(formatScore(m.flip_rate, TEXT_STYLE));
      const at = m.pass_at_k[String(K)];
      const hat = m.pass_hat_k[String(K)];
      row.push(formatScore(at, TEXT_STYLE), formatScore(hat, TEXT_STYLE));
    }
    rows.push(row);
  }
  return alignColumns(rows);
}

function unstableLines(models: readonly ModelScore[]): string[] {
  const lines: string[] = [];
  for (const m of models) {
    if (m.unstable.length === 0) continue;
    const shown = m.unstable.slice(0, 5).join(', ');
    const more = m.unstable.length > 5 ? `, … (${m.unstable.length}${m.unstable.length >= 100 ? '+' : ''} listed)` : '';
    lines.push(`  ${m.model}: ${shown}${more}`);
  }
  return lines.length > 0 ? ['Vignettes whose epochs disagree:', ...lines] : [];
}

/** A pair's row as the text and the HTML report both begin it: pair, n, difference, interval, p, p (Holm). */
export function pairCells(p: PairComparison): string[] {
  return [
    `${p.a} − ${p.b}`,
    String(p.n),
    formatDiff(p.diff, TEXT_STYLE),
    formatInterval(p.ci95, true, TEXT_STYLE),
    formatP(p.p_value) + (p.test === 'mcnemar_exact' ? ' (McNemar)' : ''),
    formatP(p.p_holm),
  ];
}

function pairTable(pairs: readonly PairComparison[]): string[] {
  const rows = [['pair', 'n', 'diff', '95 % CI', 'p', 'p (Holm)', 'min. detectable', '']];
  for (const p of pairs) {
    rows.push([...pairCells(p), formatScore(p.min_detectable_diff, TEXT_STYLE), pairVerdictText(p)]);
  }
  return alignColumns(rows, ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'left']);
}

/** What a report of prompt variants says once, above its figures. */
export function variantsNote(variants: readonly string[]): string {
  return `Prompt variants ${variants.join(', ')}: each row is an arm, a model under one variant (model · variant), paired with every other arm by item (metadata "item").`;
}

/** The report as lines of text, no trailing newlines. */
export function formatScoreReport(report: ScoreReport): string[] {
  const kind = report.kind === 'pass_fail' ? 'pass/fail' : 'graded';
  const epochs = `${report.epochs} epoch${report.epochs === 1 ? '' : 's'}`;
  const lines = [
    `Run ${report.run_id}: scorer ${report.scorer} (version ${report.scorer_version}), ${kind}, ${epochs}, epochs reduced by ${report.reducer}.`,
  ];
  if (report.declared_kind !== undefined) lines.push(`Declared ${report.declared_kind.replace('_', '/')}, read as pass/fail: every verdict is a boolean.`);
  if (report.pairwise) {
    lines.push(
      `Pairwise against the baseline ${report.pairwise.baseline}: a win counts 1, a tie 0.5, a loss 0, so a mean is the win rate against the baseline (0.5: as good as it; the baseline's own row is 0.5 by definition).`,
    );
  }
  if (report.judges) {
    const alpha = formatScore(report.judges.alpha, TEXT_STYLE);
    lines.push(`Judges ${report.judges.judges.join(', ')}: Krippendorff's alpha ${alpha} (${report.kind === 'pass_fail' ? 'nominal' : 'interval'}; 1 full agreement, 0 chance).`);
  }
  if (report.pending > 0) lines.push(`${report.pending} scores still pending: figures will move.`);
  if (report.attempt === 'final') lines.push("Each record's last attempt after retries on hard fails (not the sweep's own answers).");
  if (report.models.length === 0) {
    for (const w of report.warnings ?? []) lines.push(`Warning: ${w}`);
    lines.push('No scores yet.');
    return lines;
  }
  if (report.by !== null) lines.push(`Standard errors clustered by metadata key "${report.by}" (CR2 with Bell-McCaffrey degrees of freedom; floored at the unclustered standard error where one cluster holds most vignettes).`);
  if (report.variants) lines.push(variantsNote(report.variants));
  for (const w of report.warnings ?? []) lines.push(`Warning: ${w}`);
  lines.push('', ...leaderboard(report.models, report));
  const unstable = unstableLines(report.models);
  if (unstable.length > 0) lines.push('', ...unstable);
  if (report.pairs.length > 0) {
    const tests = report.pairs.some((p) => p.test === 'mcnemar_exact')
      ? "exact McNemar, Tango's interval"
      : report.by !== null
        ? `paired t clustered by "${report.by}"`
        : 'paired t';
    lines.push(
      '',
      `Pairs, on the vignettes both answered (${tests}; Holm-adjusted across ${report.pairs.length} pair${report.pairs.length === 1 ? '' : 's'}):`,
      ...pairTable(report.pairs),
      verdictNote(report.by !== null),
      'min. detectable: the smallest true difference the paired t test at this many vignettes finds 80 % of the time (α = 0.05).',
    );
  }
  if (report.anytime) {
    lines.push('', 'Posed until decided: the pairs are those of the anytime-valid confidence sequences (a fixed-n interval is not valid after a stop the data chose):', ...formatDecision(report.anytime));
  }
  for (const slice of report.slices ?? []) {
    lines.push('', `${report.by} = ${slice.value}:`, ...leaderboard(slice.models, report).map((l) => `  ${l}`));
  }
  return lines;
}

/** Two runs' means side by side, model by model (a model one run lacks shows n/a there). */
function sideBySide(c: RunComparison): string[] {
  const rows = [['model', 'n (A)', 'mean (A)', '95 % CI (A)', 'n (B)', 'mean (B)', '95 % CI (B)']];
  const models = [...c.models_a.map((m) => m.model), ...c.models_b.map((m) => m.model).filter((m) => !c.models_a.some((a) => a.model === m))];
  for (const model of models) {
    const row = [model];
    for (const side of [c.models_a, c.models_b]) {
      const m = side.find((x) => x.model === model);
      row.push(m ? String(m.n) : 'n/a', formatScore(m?.mean, TEXT_STYLE), m ? formatInterval(m.ci95, false, TEXT_STYLE) : 'n/a');
    }
    rows.push(row);
  }
  return alignColumns(rows);
}

/** A comparison of two runs (`panoptes report A --against B`) as lines of text, no trailing newlines. */
export function formatRunComparison(c: RunComparison): string[] {
  const versions = c.scorer_version_a === c.scorer_version_b ? `version ${c.scorer_version_a}` : `versions ${c.scorer_version_a} (A) and ${c.scorer_version_b} (B)`;
  const lines = [`Run B ${c.run_b} against run A ${c.run_a}: scorer ${c.scorer} (${versions}), epochs reduced by ${c.reducer}, paired by vignette id.`];
  if (c.variants) lines.push(variantsNote(c.variants));
  if (c.scorer_version_a !== c.scorer_version_b) lines.push('The runs were scored with different versions of the scorer: a difference may come from the scorer, not the models.');
  if (c.models_a.length === 0 && c.models_b.length === 0) {
    lines.push('No scores yet.');
    return lines;
  }
  lines.push('', ...sideBySide(c));
  if (c.pairs.length === 0) {
    lines.push('', 'No model has scores in both runs: nothing to pair.');
    return lines;
  }
  lines.push(
    '',
    `B − A for each model both ran, on the vignettes both scored (Holm-adjusted across ${c.pairs.length} pair${c.pairs.length === 1 ? '' : 's'}):`,
    ...pairTable(c.pairs),
    verdictNote(false),
  );
  return lines;
}
