/**
 * `panoptes report RUN --html FILE` end to end: a real run (two embedded mocks and a scripted model
 * that echoes each prompt, so manifest text hostile to HTML comes back as an answer) scored with the
 * demo scorers, the page written by the real CLI, then opened from disk in real Chromium with every
 * request recorded: none but the file itself, no console error, the embedded JSON equal to
 * `report --json`, the visible leaderboard equal to it, search filtering, sort reordering, and the
 * injection strings shown as text with no dialog and no extra script run.
 * Runs on: Node (tests).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildHtmlReport, embeddedJson, escapeHtml } from '../../core/scoring/html-report.js';
import type { ScoreReport } from '../../core/scoring/report-shape.js';
import { openEngine } from '../../core/service/engine.js';
import { runCli } from '../helpers/cli.js';
import { watchPage } from './harness.js';
import { useChromium } from './ui-session.js';

const SCRIPT_INJECTION = '</script><script>window.__pwned = 1; alert(1)</script>';
const IMG_INJECTION = '<img src=x onerror="window.__pwned = 2; alert(2)">';
const VIGNETTES = 30;

function writeFixtures(dir: string): { manifest: string; catalog: string } {
  const manifest = join(dir, 'hostile.jsonl');
  const lines = Array.from({ length: VIGNETTES }, (_, i) => {
    const prompt = i === 0 ? SCRIPT_INJECTION : i === 1 ? IMG_INJECTION : `Question ${i}: which option?`;
    return JSON.stringify({ id: i === 2 ? `<b>v2</b>` : `v${i}`, prompt, target: `answer ${i % 4}` });
  });
  writeFileSync(manifest, lines.join('\n') + '\n');
  const catalog = join(dir, 'echo.json');
  writeFileSync(catalog, JSON.stringify({
    providers: { script: { kind: 'scripted', trainsOnData: false } },
    models: { echo: { hosts: [{ provider: 'script', model: 'echo', contextWindow: 32000, inputPerMTok: 1, outputPerMTok: 2, options: { rules: [{ match: '^[\\s\\S]*$', answer: '$0' }] } }] } },
  }));
  return { manifest, catalog };
}

describe('the HTML report', () => {
  // No server: the report is written by the CLI and opened from disk.
  const s = useChromium();
  let dataDir: string;
  let runId: string;

  beforeAll(async () => {
    dataDir = join(s.dir, 'data');
    const { manifest, catalog } = writeFixtures(s.dir);
    const engine = openEngine({ dataDir, catalogPaths: [catalog] });
    try {
      const scorers = JSON.parse(readFileSync('examples/demo-scorers.json', 'utf8')) as { scorers: [] };
      const run = await engine.service.createRun({ manifestPath: manifest, models: ['mock-strong', 'mock-weak', 'echo'], epochs: 2, scorers });
      expect((await engine.runToEnd(run.id)).status).toBe('done');
      await engine.scoring.finish(run.id);
      runId = run.id;
    } finally {
      await engine.close();
    }
  }, 120_000);

  it('opens from disk with no request, and shows the numbers of report --json', async () => {
    const json = await runCli(['report', runId, '--json', '--data-dir', dataDir]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as ScoreReport;
    const file = join(s.dir, 'report.html');
    const written = await runCli(['report', runId, '--html', file, '--data-dir', dataDir]);
    expect(written.stderr).toBe('');
    expect(written.code).toBe(0);
    expect(written.stdout).toBe(`wrote ${file}: the report of run ${runId} (scorer exact), ${VIGNETTES} of ${VIGNETTES} vignettes listed\n`);

    const page = await s.browser.newPage();
    const problems = watchPage(page);
    const requests: string[] = [];
    await page.route('**/*', (route) => {
      requests.push(route.request().url());
      return route.request().url() === pathToFileURL(file).href ? route.continue() : route.abort();
    });
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('#vignettes[data-ready]', { timeout: 10_000 });

    const embedded = JSON.parse(await page.locator('#report-data').textContent() ?? '') as unknown;
    // The same scorer and stored scores, read by two processes: the same report.
    expect(embedded).toEqual(report);

    const board = (await page.evaluate(`Array.from(document.querySelectorAll('#leaderboard tbody tr'), (tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent))`)) as string[][];
    expect(board).toEqual(report.models.map((m) => [m.model, m.mean.toFixed(3), m.ci95 ? `[${m.ci95[0].toFixed(3)}, ${m.ci95[1].toFixed(3)}]` : 'n/a', String(m.n)]));
    expect(await page.locator('#interval-chart circle').count()).toBe(report.models.length);
    expect(await page.locator('#pairs tbody tr').count()).toBe(report.pairs.length);
    expect(await page.locator('#consistency tbody tr').count()).toBe(report.models.length);

    // Every row is there; the hostile texts are shown as text, never run.
    const rows = page.locator('#vignettes tbody tr');
    expect(await rows.count()).toBe(VIGNETTES);
    expect(await page.locator('#vignettes tbody').textContent()).toContain(SCRIPT_INJECTION);
    expect(await page.locator('#vignettes tbody').textContent()).toContain(IMG_INJECTION);
    expect(await page.locator('#vignettes tbody td', { hasText: '<b>v2</b>' }).count()).toBe(1);
    expect(await page.locator('img, b:text("v2")').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(3);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();

    // Search filters rows; clearing it brings them all back.
    await page.fill('#search', 'onerror');
    await page.waitForFunction(`document.querySelectorAll('#vignettes tbody tr').length === 1`, undefined, { timeout: 5_000 });
    expect(await rows.first().locator('td').first().textContent()).toBe('v1');
    await page.fill('#search', '');
    await page.waitForFunction(`document.querySelectorAll('#vignettes tbody tr').length === ${VIGNETTES}`, undefined, { timeout: 5_000 });

    // Sort by vignette id, then reversed.
    const ids = async (): Promise<string[]> => page.locator('#vignettes tbody tr td:first-child').allTextContents();
    const sorted = [...(await ids())].sort();
    await page.click('#vignettes th:first-child');
    await page.waitForFunction(`document.querySelector('#vignettes th').getAttribute('aria-sort') === 'ascending'`, undefined, { timeout: 5_000 });
    expect(await ids()).toEqual(sorted);
    await page.click('#vignettes th:first-child');
    await page.waitForFunction(`document.querySelector('#vignettes th').getAttribute('aria-sort') === 'descending'`, undefined, { timeout: 5_000 });
    expect(await ids()).toEqual([...sorted].reverse());

    expect(dialogs).toEqual([]);
    expect(problems).toEqual([]);
    expect(requests).toEqual([pathToFileURL(file).href]);
    await page.close();
  });

  it('cuts the vignette table at --html-vignettes and says so; bad options change nothing', async () => {
    const file = join(s.dir, 'short.html');
    const written = await runCli(['report', runId, '--html', file, '--html-vignettes', '5', '--data-dir', dataDir]);
    expect(written.code).toBe(0);
    expect(written.stdout).toContain(`5 of ${VIGNETTES} vignettes listed`);
    const html = readFileSync(file, 'utf8');
    expect(html).toContain(`The first 5 of ${VIGNETTES} vignettes are listed`);
    const data = JSON.parse(html.match(/<script type="application\/json" id="vignette-data">(.*?)<\/script>/s)![1]!) as { rows: unknown[] };
    expect(data.rows).toHaveLength(5);

    const bad = await runCli(['report', runId, '--html', join(s.dir, 'never.html'), '--html-vignettes', 'many', '--data-dir', dataDir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--html-vignettes must be a whole number');
    const both = await runCli(['report', runId, '--html', join(s.dir, 'never.html'), '--json', '--data-dir', dataDir]);
    expect(both.code).toBe(2);
    expect(() => readFileSync(join(s.dir, 'never.html'))).toThrow();
  });
});

describe('the page builder', () => {
  it('escapes text and embeds JSON that no "<" can close', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe('&#60;a href=&#34;x&#34; onclick=&#39;y&#39;&#62;&#38;&#60;/a&#62;');
    const json = embeddedJson({ s: SCRIPT_INJECTION });
    expect(json).not.toContain('<');
    expect(JSON.parse(json)).toEqual({ s: SCRIPT_INJECTION });
  });

  it('writes a page for a report with no scores yet and one whose pairs lack a verdict field', () => {
    const empty = { run_id: 'r', scorer: 's', scorer_version: 'v', kind: 'graded', epochs: 1, reducer: 'mean', by: null, models: [], pairs: [], pending: 3, not_scored: 0, not_scored_reason: null, failed: 0, failure: null, attempt: 'first', warnings: [] } as ScoreReport;
    expect(buildHtmlReport(empty, { models: [], rows: [], total: 0 }, 'now')).toContain('No scores yet.');
    const model = { model: `<i>m</i>`, n: 12, mean: 0.5, stderr: 0.1, ci95: [0.3, 0.7] as [number, number], ci_method: 't' as const, not_scored: 0, not_scored_share: 0, verdicts_missing: 0, flip_rate: null, unstable: [], pass_at_k: {}, pass_hat_k: {}, epoch_noise_share: null };
    const pair = { a: 'a', b: 'b', n: 12, diff: 0.1, stderr: 0.05, ci95: [0, 0.2], p_value: 0.04, test: 'paired_t', ci_method: 't', p_holm: 0.04, min_detectable_diff: 0.2, distinguishable: true } as unknown as ScoreReport['pairs'][number];
    const html = buildHtmlReport({ ...empty, models: [model], pairs: [pair] }, { models: [], rows: [], total: 0 }, 'now');
    expect(html).toContain('<td>distinguishable</td>');
    expect(html).not.toContain('<i>m</i>');
    expect(html).toContain('&#60;i&#62;m&#60;/i&#62;');
    expect(html).not.toContain('id="consistency"');
  });

  it("shows the judges' agreement with its scale, n/a without one, and no section for a scorer without judges", () => {
    const model = { model: 'm', n: 12, mean: 0.5, stderr: 0.1, ci95: [0.3, 0.7], ci_method: 't', not_scored: 0, not_scored_share: 0, verdicts_missing: 0, flip_rate: null, unstable: [], pass_at_k: {}, pass_hat_k: {}, epoch_noise_share: null };
    const base = { run_id: 'r', scorer: 's', scorer_version: 'v', kind: 'pass_fail', epochs: 1, reducer: 'mean', by: null, models: [model], pairs: [], pending: 0, not_scored: 0, not_scored_reason: null, failed: 0, failure: null, attempt: 'first', warnings: [] } as unknown as ScoreReport;
    const none = { models: [], rows: [], total: 0 };
    const nominal = buildHtmlReport({ ...base, judges: { alpha: 0.61234, judges: ['judge-a', '<judge-b>'] } }, none, 'now');
    expect(nominal).toContain("<h2>Judges&#39; agreement</h2>");
    expect(nominal).toContain(`<p id="judges">Judges judge-a, &#60;judge-b&#62;: Krippendorff's alpha <b>0.612</b> (nominal; 1 full agreement, 0 chance).</p>`);
    const interval = buildHtmlReport({ ...base, kind: 'graded', judges: { alpha: -0.2, judges: ['j1', 'j2'] } } as ScoreReport, none, 'now');
    expect(interval).toContain('alpha <b>-0.200</b> (interval;');
    expect(buildHtmlReport({ ...base, judges: { alpha: null, judges: ['j1', 'j2'] } }, none, 'now')).toContain('alpha <b>n/a</b>');
    expect(buildHtmlReport(base, none, 'now')).not.toContain('id="judges"');
  });

  it('shows a run posed until decided by its anytime-valid decision, with what it saved, and no fixed-n pairs', () => {
    const model = (name: string) => ({ model: name, n: 30, mean: 0.5, stderr: 0.1, ci95: [0.3, 0.7], ci_method: 't', not_scored: 0, not_scored_share: 0, verdicts_missing: 0, flip_rate: null, unstable: [], pass_at_k: {}, pass_hat_k: {}, epoch_noise_share: null });
    const anytime = {
      run_id: 'r', scorer: 's', seed: 5, batch: 6, alpha: 0.05, alpha_per_pair: 0.05, margin: 0, vignettes: 60, epochs: 1, posed_until_decided: true,
      pairs: [{ a: 'mock-strong', b: '<mock-weak>', status: 'decided', winner: 'mock-strong', n: 18, interval: [0.12, 0.81], open: false }],
      models: [], calls: 36, calls_full: 120, usd_saved: 0.0123,
    };
    const report = { run_id: 'r', scorer: 's', scorer_version: 'v', kind: 'pass_fail', epochs: 1, reducer: 'mean', by: null, models: [model('mock-strong'), model('<mock-weak>')], pairs: [], pending: 0, not_scored: 0, not_scored_reason: null, failed: 0, failure: null, attempt: 'first', warnings: [], anytime } as unknown as ScoreReport;
    const html = buildHtmlReport(report, { models: [], rows: [], total: 0 }, 'now');
    expect(html).toContain('<h2>Posed until decided</h2>');
    expect(html).toContain('<tr><td>mock-strong</td><td>&#60;mock-weak&#62;</td><td>mock-strong better</td><td class="num">18</td><td class="num">[+0.120, +0.810]</td></tr>');
    expect(html).toContain(`<p id="anytime-saved">36 of the full sweep's 120 calls (30 %): 84 calls and $0.01 saved.</p>`);
    expect(html).not.toContain('Paired comparisons');
    expect(html).not.toContain('<mock-weak>');
    expect(html).not.toContain('Stopped by the budget');
    const spent = buildHtmlReport({ ...report, anytime: { ...anytime, max_calls: 40, budget_spent: true } } as unknown as ScoreReport, { models: [], rows: [], total: 0 }, 'now');
    expect(spent).toContain('<p class="warn">Stopped by the budget: the next batch would have passed 40 calls; the pairs still open are undecided.</p>');
  });
});
