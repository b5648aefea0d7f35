/**
 * The gate's result as people read it: plain text lines for the terminal, and Markdown for a
 * pull-request comment (a table per model — base, head, difference with its 95 % interval,
 * verdict, and the prompt variant in runs of variants — and the vignettes that went from pass to fail).
 * Runs on: Node (core); pure.
 */
import { alignColumns } from '../text-table.js';
import { formatDiff, formatInterval, formatScore, TEXT_STYLE } from '../common/score-format.js';
import type { GateLine, GateResult } from './gate.js';

const VERDICT_TEXT: Record<GateLine['verdict'], string> = {
  worse: 'worse',
  better: 'better',
  unchanged: 'no significant change',
  too_few: 'too few vignettes',
};

function difference(l: GateLine): string {
  return `${formatDiff(l.diff, TEXT_STYLE)} ${l.ci95 === null ? '(no interval)' : formatInterval(l.ci95, true, TEXT_STYLE)}`;
}

/** A line's model, with its prompt variant in runs of variants (as the report names an arm). */
function unit(l: GateLine): string {
  return l.variant === null ? l.model : `${l.model} · ${l.variant}`;
}

function headline(r: GateResult): string {
  const margin = r.margin > 0 ? ` by more than ${r.margin}` : '';
  if (r.decision === 'incomparable') return `cannot compare ${r.base} (base) with ${r.head} (head)`;
  const worse = r.lines.filter((l) => l.verdict === 'worse').length;
  const what = r.lines.some((l) => l.variant !== null) ? 'scorer × model × variant' : 'scorer × model';
  if (r.decision === 'worse') return `head is worse${margin}: ${worse} of ${r.lines.length} ${what} lines are significantly worse`;
  return `head is not significantly worse${margin} than base (${r.lines.length} ${what} lines)`;
}

function notes(r: GateResult): string[] {
  const out: string[] = [];
  if (r.models_only_base.length > 0) out.push(`only in base, not compared: ${r.models_only_base.join(', ')}`);
  if (r.models_only_head.length > 0) out.push(`only in head, not compared: ${r.models_only_head.join(', ')}`);
  const changed = [...new Set(r.lines.filter((l) => l.scorer_changed).map((l) => l.scorer))];
  if (changed.length > 0) out.push(`scorer definition changed between the runs: ${changed.join(', ')}`);
  return out;
}

function dropList(l: GateLine): string {
  const more = l.pass_to_fail_count > l.pass_to_fail.length ? `, … (${l.pass_to_fail_count} in all)` : '';
  return l.pass_to_fail.join(', ') + more;
}

/** Plain text for the terminal. */
export function formatGate(r: GateResult): string[] {
  const lines = [`gate: ${headline(r)}`];
  for (const reason of r.reasons) lines.push(`  ${reason}`);
  if (r.decision === 'incomparable') return lines;
  lines.push(`base ${r.base}, head ${r.head}: ${r.vignettes} vignettes, diff = head − base`, '');
  const rows = [['model', 'scorer', 'n', 'base', 'head', 'difference [95 % CI]', 'verdict', 'pass → fail']];
  for (const l of r.lines) {
    rows.push([unit(l), l.scorer, String(l.n), formatScore(l.base_mean, TEXT_STYLE), formatScore(l.head_mean, TEXT_STYLE), difference(l), VERDICT_TEXT[l.verdict], l.kind === 'pass_fail' ? String(l.pass_to_fail_count) : '']);
  }
  lines.push(...alignColumns(rows));
  for (const n of notes(r)) lines.push(n);
  return lines;
}

/** Markdown cells may not hold a bare `|` or a line break. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** Markdown for a pull-request comment. */
export function formatGateMarkdown(r: GateResult): string {
  const icon = r.decision === 'pass' ? '✅' : r.decision === 'worse' ? '❌' : '⚠️';
  const out = [`## ${icon} Panoptes gate: ${headline(r)}`, ''];
  if (r.decision === 'incomparable') {
    for (const reason of r.reasons) out.push(`- ${cell(reason)}`);
    return out.join('\n') + '\n';
  }
  out.push(`Base run \`${r.base}\`, head run \`${r.head}\`, ${r.vignettes} vignettes paired by id. Difference = head − base, with its 95 % interval; “worse” means the whole interval lies below −${r.margin}.`, '');
  const byVariant = r.lines.some((l) => l.variant !== null);
  for (const model of r.models) {
    const mine = r.lines.filter((l) => l.model === model);
    if (mine.length === 0) continue;
    out.push(
      `### ${cell(model)}`,
      '',
      byVariant ? '| scorer | prompt variant | base | head | difference [95 % CI] | verdict |' : '| scorer | base | head | difference [95 % CI] | verdict |',
      byVariant ? '|---|---|---:|---:|---|---|' : '|---|---:|---:|---|---|',
    );
    for (const l of mine) {
      const verdict = l.verdict === 'worse' ? '**worse**' : VERDICT_TEXT[l.verdict];
      const variant = byVariant ? ` ${cell(l.variant ?? '(none)')} |` : '';
      out.push(`| ${cell(l.scorer)} |${variant} ${formatScore(l.base_mean, TEXT_STYLE)} | ${formatScore(l.head_mean, TEXT_STYLE)} | ${difference(l)} | ${verdict} |`);
    }
    out.push('');
    const dropped = mine.filter((l) => l.pass_to_fail_count > 0);
    if (dropped.length > 0) {
      out.push('Went from pass to fail:', '');
      for (const l of dropped) out.push(`- ${cell(l.scorer)}${l.variant === null ? '' : `, ${cell(l.variant)}`} (${l.pass_to_fail_count}): ${cell(dropList(l))}`);
      out.push('');
    }
  }
  for (const n of notes(r)) out.push(`> ${cell(n)}`);
  return out.join('\n').trimEnd() + '\n';
}
