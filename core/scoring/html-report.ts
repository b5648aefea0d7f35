/**
 * A scored run's report as one self-contained HTML page to share with someone without Panoptes:
 * the leaderboard with its 95 % intervals (a table and an inline SVG chart), the paired
 * comparisons (for a run posed until decided, each pair's anytime-valid decision and what it
 * saved), consistency across epochs, the judges' agreement, and a searchable, sortable table
 * of vignettes with each model's answer and verdict. Its numbers are the ScoreReport's own
 * (`panoptes report --json`), which the page also embeds as `#report-data`.
 *
 * No request of any kind: style and script inline, no fonts or images, and a Content-Security-Policy
 * that allows only the one script by its hash. Every text from a model or a manifest is escaped
 * where the page is written, and the table's rows are written by the script with textContent.
 * Fields another version of the report may lack are read defensively and shown when present.
 * Runs on: Node (core); pure.
 */
import { createHash } from 'node:crypto';
import { pairCells, variantsNote, verdictNote } from './format-report.js';
import { REPORT_SCRIPT, REPORT_STYLE } from './html-report-assets.js';
import type { ModelScore, PairComparison, ScoreReport } from './report-shape.js';
import type { DecisionReport } from './adaptive-decision.js';
import { formatUsd } from '../common/money.js';
import { pairVerdictText } from '../common/pair-verdict.js';
import { formatInterval, formatScore, TEXT_STYLE } from '../common/score-format.js';

/** One cell of the vignette table: a model's answer and the verdict on it. */
export interface ReportVignetteCell {
  model: string;
  /** The model's first answer to the vignette (cut with an ellipsis when long); null when none is stored. */
  answer: string | null;
  /** The epochs reduced to one value; null while unscored. */
  value: number | null;
  /** Pass/fail scorers: epochs that passed; null for graded. */
  passed: number | null;
  /** Epochs with a score. */
  scored: number;
}

export interface ReportVignetteRow {
  id: string;
  cells: ReportVignetteCell[];
}

export interface ReportVignettes {
  models: string[];
  rows: ReportVignetteRow[];
  /** Vignettes in the run; more than rows.length when the table was cut at the limit. */
  total: number;
}

/** Text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON to embed in a `<script type="application/json">`: no `<` can close the element. */
export function embeddedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function table(header: string[], rows: string[][], numeric: ReadonlySet<number>, id?: string): string {
  const cell = (tag: 'th' | 'td', text: string, i: number): string => `<${tag}${numeric.has(i) ? ' class="num"' : ''}>${escapeHtml(text)}</${tag}>`;
  return [
    `<table${id ? ` id="${id}"` : ''}>`,
    `<thead><tr>${header.map((h, i) => cell('th', h, i)).join('')}</tr></thead>`,
    `<tbody>${rows.map((r) => `<tr>${r.map((t, i) => cell('td', t, i)).join('')}</tr>`).join('')}</tbody>`,
    '</table>',
  ].join('\n');
}

function leaderboard(report: ScoreReport): string {
  const rows = report.models.map((m) => [m.model, formatScore(m.mean, TEXT_STYLE), m.role === 'baseline' ? 'baseline' : formatInterval(m.ci95, false, TEXT_STYLE), String(m.n)]);
  return table(['model', 'mean', '95 % CI', 'n'], rows, new Set([1, 2, 3]), 'leaderboard');
}

const CHART = { left: 200, width: 420, row: 26, top: 28 };

/** The leaderboard's means and intervals on a 0 to 1 axis, one row per model. */
function intervalChart(models: readonly ModelScore[]): string {
  const x = (v: number): number => Math.round((CHART.left + Math.min(1, Math.max(0, v)) * CHART.width) * 10) / 10;
  const height = CHART.top + models.length * CHART.row + 8;
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" id="interval-chart" role="img" aria-label="means with 95 % intervals" width="${CHART.left + CHART.width + 40}" height="${height}">`];
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    parts.push(`<line x1="${x(tick)}" x2="${x(tick)}" y1="${CHART.top - 8}" y2="${height - 4}" stroke="#e4e7ec"/>`);
    parts.push(`<text x="${x(tick)}" y="${CHART.top - 12}" text-anchor="middle">${tick}</text>`);
  }
  models.forEach((m, i) => {
    const y = CHART.top + i * CHART.row + CHART.row / 2;
    parts.push(`<text x="${CHART.left - 10}" y="${y + 4}" text-anchor="end">${escapeHtml(m.model)}</text>`);
    if (m.ci95 !== null) parts.push(`<line x1="${x(m.ci95[0])}" x2="${x(m.ci95[1])}" y1="${y}" y2="${y}" stroke="#3559c7" stroke-width="3"/>`);
    parts.push(`<circle cx="${x(m.mean)}" cy="${y}" r="5" fill="#1d2330"><title>${escapeHtml(`${m.model}: ${formatScore(m.mean, TEXT_STYLE)} ${formatInterval(m.ci95, false, TEXT_STYLE)}`)}</title></circle>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

function pairs(list: readonly PairComparison[], clustered: boolean): string {
  const rows = list.map((p) => [
    ...pairCells(p),
    typeof p.verdict === 'string' ? pairVerdictText(p) : p.distinguishable ? 'distinguishable' : 'not distinguishable',
  ]);
  return [
    table(['pair', 'n', 'diff', '95 % CI', 'p', 'p (Holm)', 'verdict'], rows, new Set([1, 2, 3, 4, 5]), 'pairs'),
    `<p class="note">${escapeHtml(verdictNote(clustered))}</p>`,
  ].join('\n');
}

/** Flip rate, pass@K and pass^K per model, where the report has them (pass/fail with 2+ epochs). */
function consistency(report: ScoreReport): string | null {
  const K = report.epochs;
  const has = report.models.some((m) => m.flip_rate !== null || m.pass_at_k?.[String(K)] !== undefined);
  if (!has) return null;
  const rows = report.models.map((m) => [
    m.model,
    formatScore(m.flip_rate, TEXT_STYLE),
    formatScore(m.pass_at_k?.[String(K)], TEXT_STYLE),
    formatScore(m.pass_hat_k?.[String(K)], TEXT_STYLE),
    String(m.unstable?.length ?? 0),
  ]);
  return table(['model', 'flip rate', `pass@${K}`, `pass^${K}`, 'vignettes that flip'], rows, new Set([1, 2, 3, 4]), 'consistency');
}

/** A run posed until decided: each pair's anytime-valid decision (no fixed-n pair table: it is not valid after such a stop), and what the stop saved. */
function anytime(d: DecisionReport | undefined): string | null {
  if (!d) return null;
  const rows = d.pairs.map((p) => [p.a, p.b, p.status === 'decided' ? `${p.winner ?? ''} better` : p.status, String(p.n), formatInterval(p.interval, true, TEXT_STYLE)]);
  const share = d.calls_full > 0 ? Math.round((100 * d.calls) / d.calls_full) : 100;
  return [
    `<p>Posed until decided: vignettes in the order of seed ${d.seed}, looked at every ${d.batch}; alpha ${d.alpha} over the pairs. The pairs are those of the anytime-valid confidence sequences: a fixed-n interval is not valid after a stop the data chose, so none is shown.</p>`,
    table(['a', 'b', 'decision', 'at n', 'anytime-valid interval of a − b'], rows, new Set([3, 4]), 'anytime'),
    `<p id="anytime-saved">${d.calls} of the full sweep's ${d.calls_full} calls (${share} %): ${d.calls_full - d.calls} calls and ${escapeHtml(formatUsd(d.usd_saved))} saved.</p>`,
    d.budget_spent ? `<p class="warn">Stopped by the budget: the next batch would have passed ${d.max_calls ?? 0} calls; the pairs still open are undecided.</p>` : '',
  ].join('\n');
}

function judges(report: ScoreReport): string | null {
  if (!report.judges) return null;
  const alpha = formatScore(report.judges.alpha, TEXT_STYLE);
  const scale = report.kind === 'pass_fail' ? 'nominal' : 'interval';
  return `<p id="judges">Judges ${escapeHtml(report.judges.judges.join(', '))}: Krippendorff's alpha <b>${escapeHtml(alpha)}</b> (${scale}; 1 full agreement, 0 chance).</p>`;
}

function vignetteTable(v: ReportVignettes): string {
  const header = ['vignette', ...v.models.flatMap((m) => [`${m}: answer`, `${m}: verdict`])];
  const cut = v.rows.length < v.total ? ` The first ${v.rows.length} of ${v.total} vignettes are listed (set the number with --html-vignettes).` : '';
  return [
    `<p><input id="search" type="search" placeholder="Search answers, ids, verdicts" aria-label="search the vignettes"> <span id="shown" class="note"></span></p>`,
    `<p class="note">Each model's first answer and the scorer's verdict (epochs reduced as above). Click a header to sort.${escapeHtml(cut)}</p>`,
    `<table id="vignettes"><thead><tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody></tbody></table>`,
  ].join('\n');
}

function section(title: string, body: string | null): string {
  return body === null ? '' : `<h2>${escapeHtml(title)}</h2>\n${body}`;
}

/** The whole page. `generated` is written as given (an ISO time), so the same inputs give the same page. */
export function buildHtmlReport(report: ScoreReport, vignettes: ReportVignettes, generated: string): string {
  const scriptHash = createHash('sha256').update(REPORT_SCRIPT).digest('base64');
  const csp = `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${scriptHash}'; img-src 'none'; form-action 'none'; base-uri 'none'`;
  const kind = report.kind === 'pass_fail' ? 'pass/fail' : 'graded';
  const notes = [
    `Scorer <b>${escapeHtml(report.scorer)}</b> (version ${escapeHtml(report.scorer_version)}), ${kind}, ${report.epochs} epoch${report.epochs === 1 ? '' : 's'} reduced by ${escapeHtml(report.reducer)}.`,
  ];
  if (report.pairwise) notes.push(`Pairwise against the baseline ${escapeHtml(report.pairwise.baseline)}: a mean is the win rate against it.`);
  if (report.by !== null) notes.push(`Standard errors clustered by metadata key "${escapeHtml(report.by)}".`);
  if (report.variants) notes.push(escapeHtml(variantsNote(report.variants)));
  if (report.pending > 0) notes.push(`${report.pending} scores still pending: figures will move.`);
  const warnings = (report.warnings ?? []).map((w) => `<p class="warn">Warning: ${escapeHtml(w)}</p>`).join('\n');
  const body = report.models.length === 0
    ? '<p>No scores yet.</p>'
    : [
        section('Leaderboard', `${leaderboard(report)}\n${intervalChart(report.models)}`),
        report.pairs.length > 0 ? section('Paired comparisons', pairs(report.pairs, report.by !== null)) : '',
        section('Posed until decided', anytime(report.anytime)),
        section('Consistency across epochs', consistency(report)),
        section("Judges' agreement", judges(report)),
        section('Vignettes', vignetteTable(vignettes)),
      ].join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(`Panoptes report: run ${report.run_id}, ${report.scorer}`)}</title>
<style>${REPORT_STYLE}</style>
</head>
<body>
<h1>Run ${escapeHtml(report.run_id)}</h1>
<p>${notes.join(' ')}</p>
<p class="note">Made by Panoptes on ${escapeHtml(generated)}. The numbers are those of <code>panoptes report ${escapeHtml(report.run_id)} --json</code>, embedded below as <code>#report-data</code>.</p>
${warnings}
${body}
<script type="application/json" id="report-data">${embeddedJson(report)}</script>
<script type="application/json" id="vignette-data">${embeddedJson(vignettes)}</script>
<script>${REPORT_SCRIPT}</script>
</body>
</html>
`;
}
