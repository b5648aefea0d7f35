/**
 * What scoring cost beside the sweep, over HTTP and in the Run view, in real Chromium against a
 * real engine: a run of the embedded mocks judged by `mock-judge` (one call per record). Its
 * `/runs/:id/stats` gives the judges' calls apart and the total with them, equal to the
 * contract's `stats`; the Run view's *With scoring* card shows the same sums and the judge's line.
 * Runs on: Node (tests), driving Chromium.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../core/common/money.js';
import { writeTargetManifest } from '../helpers/temp.js';
import { TOKEN, WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

describe('what scoring cost, beside the sweep', () => {
  const s = useUiSession();
  let runId: string;

  beforeAll(async () => {
    const manifestPath = writeTargetManifest(s.dir, 12);
    const scorers = { scorers: [{ name: 'exact', type: 'match' as const }, { name: 'judged', type: 'judge' as const, judges: ['mock-judge'], rubric: 'Is the answer right?' }] };
    runId = (await s.scoredRun({ manifestPath, models: ['mock-strong', 'mock-weak'], epochs: 2, privacy: 'off', scorers })).id;
    await s.openApp();
  }, 60_000);

  it("GET /runs/:id/stats gives the judges' calls apart and the total with them, as the contract does", async () => {
    const res = await fetch(`${s.ui.origin}/runs/${runId}/stats`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { judges: { models: { model: string; calls: number; est_cost_usd: number }[]; total_est_cost_usd: number }; total_est_cost_usd: number; total_with_scoring_usd: number };
    const stats = await s.call('stats', { runId });
    // One judge call per record: 12 vignettes x 2 models x 2 epochs.
    expect(body.judges.models.map((m) => [m.model, m.calls])).toEqual([['mock-judge', 48]]);
    expect(body.judges.total_est_cost_usd).toBeCloseTo(stats.totalJudgeCostUsd, 12);
    expect(body.total_with_scoring_usd).toBeCloseTo(stats.totalWithScoringUsd, 12);
    expect(body.total_with_scoring_usd).toBeCloseTo(body.total_est_cost_usd + body.judges.total_est_cost_usd, 12);
  });

  it('the Run view shows the same sums in its With scoring card, the judge on a line of its own', async () => {
    await s.page.goto(`${s.ui.origin}/#/runs/${runId}`);
    const card = s.page.getByTestId('scoring-costs');
    await card.waitFor(WAIT);
    const stats = await s.call('stats', { runId });
    expect((await card.getByTestId('cost-in-all').textContent())!.replace(/\s+/g, ' ').trim()).toBe(
      `In all ${formatUsd(stats.totalWithScoringUsd)} = sweep ${formatUsd(stats.totalEstCostUsd)} + judges ${formatUsd(stats.totalJudgeCostUsd)} + retries ${formatUsd(stats.totalRetryCostUsd)}`,
    );
    await expect.poll(() => card.getByTestId('judge-usage').textContent(), WAIT).toContain('mock-judge');
    expect(s.problems).toEqual([]);
  });
});
