/**
 * The readable report: reports built from hand-made cells print a leaderboard with aligned
 * columns, interval and consistency figures, the unstable vignettes, the pair table with its
 * verdict (better / not distinguishable), the minimum detectable difference and slices, and a
 * pairwise judge's note that its means are win rates against the baseline.
 */
import { describe, expect, it } from 'vitest';
import { formatP, formatScoreReport } from '../../core/scoring/format-report.js';
import { buildScoreReport, type ReportOptions, type ScoreCell } from '../../core/scoring/report.js';
import { alignColumns } from '../../core/text-table.js';

const base: ReportOptions = { runId: 'run-7', scorer: 'exact', scorerVersion: '3f2a', kind: 'pass_fail', epochs: 2 };

function cells(table: Record<string, Record<string, number[]>>, group?: (v: string) => string): ScoreCell[] {
  const out: ScoreCell[] = [];
  for (const [model, rows] of Object.entries(table)) {
    for (const [vignetteId, values] of Object.entries(rows)) {
      values.forEach((value, e) => out.push({ model, vignetteId, epoch: e + 1, value, passed: value === 1, group: group?.(vignetteId) ?? null }));
    }
  }
  return out;
}

/** n vignettes, model `strong` always right, `weak` right on every third. */
function lopsided(n: number): Record<string, Record<string, number[]>> {
  const strong: Record<string, number[]> = {};
  const weak: Record<string, number[]> = {};
  for (let i = 0; i < n; i++) {
    strong[`v${i}`] = [1, 1];
    weak[`v${i}`] = i % 3 === 0 ? [1, 0] : [0, 0];
  }
  return { strong, weak };
}

describe('formatScoreReport', () => {
  it('prints the heading, an aligned leaderboard, unstable vignettes and a decided pair', async () => {
    const report = await buildScoreReport({ ...base, models: ['strong', 'weak'] }, cells(lopsided(30)));
    const lines = formatScoreReport(report);
    expect(lines[0]).toBe('Run run-7: scorer exact (version 3f2a), pass/fail, 2 epochs, epochs reduced by mean.');
    const head = lines.findIndex((l) => l.startsWith('model'));
    expect(lines[head]).toMatch(/^model\s+n\s+mean\s+95 % CI\s+flip rate\s+pass@2\s+pass\^2$/);
    const strong = lines[head + 1]!;
    const weak = lines[head + 2]!;
    // A perfect model's interval is Wilson's, never the point [1.000, 1.000].
    expect(strong).toMatch(/^strong\s+30\s+1\.000\s+\[0\.8\d{2}, 1\.000\]\s+0\.000\s+1\.000\s+1\.000$/);
    expect(weak).toMatch(/^weak\s+30\s+0\.167\s+\[0\.\d{3}, 0\.\d{3}\]\s+0\.333\s+0\.333\s+0\.000$/);
    // Columns line up: each line of the table is as long as the header's columns make it.
    expect(lines[head]!.indexOf('mean') + 'mean'.length).toBe(strong.indexOf('1.000') + '1.000'.length);
    expect(lines).toContain('Vignettes whose epochs disagree:');
    expect(lines).toContain('  weak: v0, v3, v6, v9, v12, … (10 listed)');
    const pairHead = lines.findIndex((l) => l.startsWith('pair'));
    expect(lines[pairHead - 1]).toBe('Pairs, on the vignettes both answered (paired t; Holm-adjusted across 1 pair):');
    expect(lines[pairHead]).toMatch(/^pair\s+n\s+diff\s+95 % CI\s+p\s+p \(Holm\)\s+min\. detectable$/);
    expect(lines[pairHead + 1]).toMatch(/^strong − weak\s+30\s+\+0\.833\s+\[\+0\.\d{3}, \+0\.\d{3}\]\s+<0\.001\s+<0\.001\s+0\.\d{3}\s+strong better$/);
    expect(lines.some((l) => l.startsWith('min. detectable: the smallest true difference'))).toBe(true);
    expect(lines).toContain(
      'better: the Holm-adjusted p of the test shown is below 0.05 (across every pair above); otherwise not distinguishable; under 10 shared vignettes, too few to compare.',
    );
  });

  it("says that a pairwise judge's means are win rates against its baseline", async () => {
    const wins = { strong: { v1: [1, 0.5], v2: [1, 1], v3: [0, 0.5] } };
    const report = await buildScoreReport({ ...base, kind: 'graded', pairwiseBaseline: 'weak' }, cells(wins));
    expect(report.pairwise).toEqual({ baseline: 'weak' });
    expect(formatScoreReport(report)[1]).toBe(
      "Pairwise against the baseline weak: a win counts 1, a tie 0.5, a loss 0, so a mean is the win rate against the baseline (0.5: as good as it; the baseline's own row is 0.5 by definition).",
    );
    const plain = await buildScoreReport({ ...base, kind: 'graded' }, cells(wins));
    expect(plain.pairwise).toBeUndefined();
    expect(formatScoreReport(plain).some((l) => l.includes('win rate'))).toBe(false);
  });

  it("prints the judges' Krippendorff alpha with its level, and n/a when there is none", async () => {
    const report = await buildScoreReport({ ...base, models: ['strong', 'weak'] }, cells(lopsided(12)));
    const judged = formatScoreReport({ ...report, judges: { alpha: 0.45678, judges: ['judge-a', 'judge-b'] } });
    expect(judged).toContain("Judges judge-a, judge-b: Krippendorff's alpha 0.457 (nominal; 1 full agreement, 0 chance).");
    const graded = formatScoreReport({ ...report, kind: 'graded', judges: { alpha: null, judges: ['judge-a', 'judge-b'] } });
    expect(graded).toContain("Judges judge-a, judge-b: Krippendorff's alpha n/a (interval; 1 full agreement, 0 chance).");
    expect(formatScoreReport(report).some((l) => l.includes('Krippendorff'))).toBe(false);
  });

  it('says "too few vignettes to compare" under 10 shared vignettes, and labels exact McNemar with its interval', async () => {
    const report = await buildScoreReport(
      { ...base, epochs: 1 },
      cells({
        a: { v1: [1], v2: [0], v3: [1], v4: [0], v5: [1] },
        b: { v1: [0], v2: [1], v3: [1], v4: [0], v5: [0] },
      }),
    );
    const lines = formatScoreReport(report);
    expect(lines.some((l) => l.includes("(exact McNemar, Tango's interval; Holm-adjusted across 1 pair)"))).toBe(true);
    const row = lines.find((l) => l.startsWith('a − b'))!;
    expect(row).toMatch(/\+0\.200\s+\[-\d\.\d{3}, \+\d\.\d{3}\]\s+1\.000 \(McNemar\)\s+1\.000\s+\d\.\d{3}\s+too few vignettes to compare$/);
    // One epoch: no flip rate or pass@K columns.
    expect(lines.find((l) => l.startsWith('model'))).toMatch(/^model\s+n\s+mean\s+95 % CI$/);
  });

  it('prints the widest honest interval for one vignette (Wilson), and the pending count', async () => {
    const report = await buildScoreReport({ ...base, kind: 'graded', pending: 12 }, cells({ solo: { v1: [0.4, 0.6] } }));
    const lines = formatScoreReport(report);
    expect(lines[1]).toBe('12 scores still pending: figures will move.');
    expect(lines.find((l) => l.startsWith('solo'))).toMatch(/^solo\s+1\s+0\.500\s+\[0\.055, 0\.945\]$/);
    expect(lines.some((l) => l.startsWith('Pairs'))).toBe(false);
  });

  it('says so when there are no scores yet', async () => {
    const lines = formatScoreReport(await buildScoreReport(base, []));
    expect(lines).toEqual(['Run run-7: scorer exact (version 3f2a), pass/fail, 2 epochs, epochs reduced by mean.', 'No scores yet.']);
  });

  it('prints the clustering and one leaderboard per slice', async () => {
    const topic = (v: string) => (Number(v.slice(1)) % 2 === 0 ? 'dose' : 'triage');
    const report = await buildScoreReport({ ...base, by: 'topic', models: ['strong', 'weak'] }, cells(lopsided(12), topic));
    const lines = formatScoreReport(report);
    expect(lines).toContain('Standard errors clustered by metadata key "topic" (CR2 with Bell-McCaffrey degrees of freedom; floored at the unclustered standard error where one cluster holds most vignettes).');
    expect(lines.some((l) => l.startsWith('Warning: Clustering by "topic" rests on only 2 clusters (fewer than 10)'))).toBe(true);
    expect(lines.some((l) => l.startsWith('Pairs, on the vignettes both answered (paired t clustered by "topic"'))).toBe(true);
    const dose = lines.indexOf('topic = dose:');
    const triage = lines.indexOf('topic = triage:');
    expect(dose).toBeGreaterThan(0);
    expect(triage).toBeGreaterThan(dose);
    expect(lines[dose + 1]).toMatch(/^ {2}model\s+n\s+mean/);
    expect(lines[dose + 2]).toMatch(/^ {2}strong\s+6\s+1\.000/);
  });
});

describe('formatP and alignColumns', () => {
  it('formats p-values', () => {
    expect(formatP(null)).toBe('n/a');
    expect(formatP(0.0004)).toBe('<0.001');
    expect(formatP(0.0456)).toBe('0.046');
    expect(formatP(1)).toBe('1.000');
  });
  it('aligns names left and numbers right, or as told, and trims the line ends', () => {
    expect(alignColumns([
      ['model', 'n', 'verdict'],
      ['a-long-name', '1000', 'ok'],
    ], ['left', 'right', 'left'])).toEqual(['model           n  verdict', 'a-long-name  1000  ok']);
    expect(alignColumns([])).toEqual([]);
    expect(alignColumns([['x', '1'], ['yy']])).toEqual(['x   1', 'yy']);
  });
});
