/**
 * What runs cost, before and after, in real Chromium against a real engine: New run's estimate for
 * a known manifest, priced models, a max-tokens setting and scorers (an LLM judge and a rule that
 * retries hard fails) shows the figures worked by hand below; the Runs list shows a scored run's
 * cost with its judges and retries, the sweep's apart; Export with *Score columns* and JSONL
 * downloads each record with its scores.
 * Runs on: Node (tests), driving Chromium.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../core/common/money.js';
import { writeTargetManifest } from '../helpers/temp.js';
import { WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

/** Two mock models at known prices, per million tokens: $2 / $10 and $1 / $4. */
function writePricedCatalog(dir: string): string {
  const host = (model: string, inputPerMTok: number, outputPerMTok: number) => ({
    hosts: [{ provider: 'mocktest', model, contextWindow: 100_000, inputPerMTok, outputPerMTok, options: { latencyMs: 0 } }],
  });
  const path = join(dir, 'priced-catalog.json');
  writeFileSync(path, JSON.stringify({ providers: { mocktest: { kind: 'mock', trainsOnData: false } }, models: { 'price-a': host('price-a', 2, 10), 'price-b': host('price-b', 1, 4) } }));
  return path;
}

/** Ten vignettes, each prompt exactly 40 characters. */
function writeFortyCharManifest(dir: string): string {
  const path = join(dir, 'forty.jsonl');
  const lines = Array.from({ length: 10 }, (_, i) => JSON.stringify({ id: `f${i}`, prompt: `Question ${i}: which option is right?`.padEnd(40, '?'), target: 'A' }));
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

// An 80-character rubric: 20 tokens at ~4 characters a token.
const RUBRIC = 'Is the answer the option the question asks for? Say yes or no, and nothing more.';

describe('costs and exports in the app', () => {
  const s = useUiSession({
    engine: (dir) => ({ catalogPaths: [writePricedCatalog(dir)] }),
    context: { viewport: { width: 1280, height: 800 }, acceptDownloads: true },
  });

  beforeAll(async () => {
    s.ui.engine.scoring.start();
    await s.openApp();
  });

  it("shows New run's estimate with the judge's calls and the retries' bound, as worked by hand", async () => {
    expect(RUBRIC).toHaveLength(80);
    await s.page.goto(`${s.ui.origin}/#/new`);
    // First launch fills in the example (its 24 vignettes and the demo's scorers); wait for it, then choose this test's.
    const vignettes = () => s.page.getByTestId('vignette-count').textContent();
    await expect.poll(vignettes, WAIT).toBe('24');
    await s.page.getByTestId('manifest-path').fill(writeFortyCharManifest(s.dir));
    await expect.poll(vignettes, WAIT).toBe('10');
    await s.page.getByTestId('new-run-scoring-text').fill('');
    // The default models off (each unticked shifts the rest), then the two priced ones on.
    const ticked = s.page.locator('.model-option.checked input');
    while ((await ticked.count()) > 0) await ticked.first().uncheck();
    await s.page.locator('[data-model=price-a] input').check();
    await s.page.locator('[data-model=price-b] input').check();
    await s.page.getByTestId('epochs').fill('2');
    await s.page.getByTestId('max-tokens').fill('100');
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 40 calls');

    // The sweep, per model and epoch: 400 prompt characters = 100 tokens, plus 8 per message x 10 = 180
    // input tokens; x 2 epochs = 360 in, and 100 max tokens x 10 x 2 = 2,000 out (no earlier answers).
    // price-a: 360 x $2/M + 2,000 x $10/M = $0.02072; price-b: 360 x $1/M + 2,000 x $4/M = $0.00836.
    const sweep = 0.02072 + 0.00836;
    await expect.poll(() => s.page.getByTestId('estimate-cost').textContent(), WAIT).toBe(formatUsd(sweep));
    expect(await s.page.getByTestId('run-estimate').textContent()).toContain('for about 720 input and 4,000 output tokens');
    expect(await s.page.getByTestId('estimate-scoring').count()).toBe(0);

    await s.page.getByTestId('new-run-scoring-text').fill(
      JSON.stringify({
        scorers: [
          { name: 'exact', type: 'match', retryOnHardFail: 2 },
          { name: 'judged', type: 'judge', judges: ['mock-judge'], rubric: RUBRIC },
        ],
      }),
    );
    // The judge, once per record (10 x 2 epochs x 2 models = 40 calls): the prompt (10 tokens), the
    // answer (100), the rubric (20) and the judge's template (64) in, 194 x 40 = 7,760 tokens; 64 out
    // per verdict (no earlier verdicts), 2,560; at mock-judge's $0.50 / $1.50 per million: $0.00388 + $0.00384.
    const judge = 0.00388 + 0.00384;
    await expect.poll(() => s.page.getByTestId('estimate-judges').textContent(), WAIT).toBe(formatUsd(judge));
    const line = (await s.page.getByTestId('estimate-scoring').textContent())!;
    expect(line).toContain('for 40 calls (mock-judge ');
    // Retries: at most 2 more asks of the candidates, if every answer failed hard: 2 x the sweep.
    expect(line).toContain(`retries of hard fails: up to ${formatUsd(2 * sweep)}`);
    expect(await s.page.getByTestId('estimate-total').textContent()).toBe(formatUsd(sweep + judge));
    expect(line).toContain(`up to ${formatUsd(sweep + judge + 2 * sweep)} if every answer failed hard`);
    // The sweep's own figure is unchanged by the scorers.
    expect(await s.page.getByTestId('estimate-cost').textContent()).toBe(formatUsd(sweep));
    expect(s.problems).toEqual([]);
  });

  it("lists a scored run's cost with its judges and retries, and exports JSONL records with their scores", async () => {
    const service = s.ui.engine.service;
    const run = await service.createRun({
      manifestPath: writeTargetManifest(s.dir, 12),
      models: ['mock-strong', 'mock-weak'],
      epochs: 2,
      scorers: {
        scorers: [
          { name: 'exact', type: 'match', retryOnHardFail: 1 },
          { name: 'judged', type: 'judge', judges: ['mock-judge'], rubric: RUBRIC },
        ],
      },
    });
    await expect.poll(async () => (await service.getRun({ runId: run.id })).run.status, WAIT).toBe('done');
    await s.ui.engine.scoring.finish(run.id);
    const stats = await service.stats({ runId: run.id });
    expect(stats.totalJudgeCostUsd).toBeGreaterThan(0);
    expect(stats.totalRetryCostUsd).toBeGreaterThan(0);

    await s.page.goto(`${s.ui.origin}/#/runs`);
    const cost = s.page.locator(`[data-testid=run-row][data-run-id="${run.id}"] [data-testid=run-cost]`);
    await expect.poll(() => cost.locator('[data-testid=run-cost-sweep]').textContent(), WAIT).toBe(`sweep ${formatUsd(stats.totalEstCostUsd)}`);
    expect(await cost.evaluate((el) => el.firstChild?.textContent)).toBe(formatUsd(stats.totalWithScoringUsd));
    expect(await cost.getAttribute('title')).toBe(
      `sweep ${formatUsd(stats.totalEstCostUsd)} + judges ${formatUsd(stats.totalJudgeCostUsd)} + retries ${formatUsd(stats.totalRetryCostUsd)}`,
    );

    await s.page.goto(`${s.ui.origin}/#/export/${run.id}`);
    await s.page.locator('input[name=format][value=jsonl]').check();
    await s.page.getByTestId('export-scores').check();
    const [download] = await Promise.all([s.page.waitForEvent('download'), s.page.getByTestId('export-button').click()]);
    const path = join(s.dir, 'scored.jsonl');
    await download.saveAs(path);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { scores: Record<string, { passed: boolean | null; kind: string } | null> });
    expect(lines).toHaveLength(12 * 2 * 2);
    expect(lines.every((l) => Object.keys(l.scores).join() === 'exact,judged')).toBe(true);
    expect(lines.every((l) => l.scores.exact?.kind === 'pass_fail' && typeof l.scores.exact.passed === 'boolean')).toBe(true);
    expect(s.problems).toEqual([]);
  });
});
