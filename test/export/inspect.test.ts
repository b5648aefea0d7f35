/**
 * `export --format inspect`: a real run (real SQLite in a temp folder, the known-accuracy mock
 * models) written as inspect_ai EvalLogs, each validated against inspect's own EvalLog schema
 * (test/export/fixtures/inspect-evallog-schema.json, extracted from its published OpenAPI file by
 * scripts/inspect-evallog-schema.py), with the samples, scores and metrics checked against the
 * run's records and report; a bad run id writes nothing; and the CLI end to end.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../core/service/engine.js';
import { InspectExport } from '../../core/service/inspect-export.js';
import { runCli } from '../helpers/cli.js';
import { expectValid, INSPECT_LOG_FILE, readLogs, validateEvalLog, validateEvalSet, type Log, type Sample } from '../helpers/inspect-logs.js';
import { useTempEngines } from '../helpers/temp-engine.js';

const tmp = useTempEngines();

const CHAT = [
  { role: 'system', content: 'Answer with one letter.' },
  { role: 'user', content: 'Pick one.' },
  { role: 'assistant', content: 'Of what?' },
  { role: 'user', content: 'Which option is right for question 3?' },
];

/** Three single-turn vignettes (one with a system message) and one chat vignette, each with a target. */
function manifest(dir: string): string {
  const path = join(dir, 'suite.jsonl');
  const lines = [
    { id: 'q0', prompt: 'Which option is right for question 0?', target: 'A', metadata: { topic: 'even' } },
    { id: 'q1', prompt: 'Which option is right for question 1?', system: 'Be brief.', target: 'B' },
    { id: 'q2', prompt: 'Which option is right for question 2?', target: 'C' },
    { id: 'chat', messages: CHAT, target: 'D' },
  ];
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return path;
}

async function finishedRun(e: Engine, scorers: boolean): Promise<string> {
  e.scoring.start();
  const run = await e.service.createRun({
    manifestPath: manifest(tmp.dir),
    models: ['mock-strong', 'mock-weak'],
    epochs: 2,
    ...(scorers ? { scorers: { scorers: [{ name: 'exact', type: 'match' as const }] } } : {}),
  });
  expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
  await e.scoring.finish(run.id);
  return run.id;
}

describe('export --format inspect', () => {
  it('writes one valid EvalLog per model, one eval set, a sample per (vignette, epoch) with its scores and the report as metrics', async () => {
    const e = tmp.open({ tickMs: 20 });
    const runId = await finishedRun(e, true);
    const out = join(tmp.dir, 'logs');
    const res = await e.service.exportRun({ runId, format: 'inspect', outPath: out });
    expect(res.files).toHaveLength(2);
    expect(res.lines).toBe(16);
    const logs = readLogs(out);
    expect(logs.map((l) => l.eval.model)).toEqual(['mock-strong', 'mock-weak']);
    expect(new Set(logs.map((l) => l.eval.eval_set_id)).size).toBe(1);
    expect(readdirSync(out).filter((f) => !f.endsWith('.json'))).toEqual([]); // no temporary file left
    expect(res.files!.every((f) => INSPECT_LOG_FILE.test(basename(f)))).toBe(true);
    const set = JSON.parse(readFileSync(join(out, 'eval-set.json'), 'utf8')) as { eval_set_id: string; tasks: { model: string }[] };
    expect(validateEvalSet(set)).toBe(true);
    expect(INSPECT_LOG_FILE.test('eval-set.json')).toBe(false);
    expect(set).toMatchObject({ eval_set_id: logs[0]!.eval.eval_set_id, tasks: [{ model: 'mock-strong' }, { model: 'mock-weak' }] });

    // The schema is a real check: a sample without its epoch, or a score without a value, fails it.
    const broken = JSON.parse(JSON.stringify(logs[0])) as { samples: Partial<Sample>[] };
    delete broken.samples[0]!.epoch;
    expect(validateEvalLog(broken)).toBe(false);
    const noValue = JSON.parse(JSON.stringify(logs[1])) as Log;
    delete (noValue.samples[0]!.scores.exact as Partial<Sample['scores'][string]>).value;
    expect(validateEvalLog(noValue)).toBe(false);

    const report = await e.service.report({ runId, scorer: 'exact' });
    for (const log of logs) {
      expectValid(log);
      expect(log).toMatchObject({ version: 2, status: 'success', eval: { task: 'suite', dataset: { samples: 4 } } });
      expect(log.samples).toHaveLength(8);
      expect(new Set(log.samples.map((s) => `${s.id}|${s.epoch}`)).size).toBe(8);
      expect(log.results).toMatchObject({ total_samples: 8, completed_samples: 8 });

      const records = (await e.service.responses({ runId, model: log.eval.model, limit: 100 })).items;
      for (const s of log.samples) {
        const r = records.find((x) => x.vignetteId === s.id && x.epoch === s.epoch)!;
        expect(s.output.completion).toBe(r.response);
        expect(s.output.choices[0]!.message).toMatchObject({ role: 'assistant', content: r.response });
        expect(s.messages.at(-1)).toMatchObject({ role: 'assistant', content: r.response });
        expect(s.target).toBe(r.target);
        expect(s.output.usage.total_tokens).toBe(r.usage.inputTokens + r.usage.outputTokens);
        // The match rule: 1 exactly when the answer is the target.
        expect(s.scores.exact).toMatchObject({ value: r.response.trim() === r.target ? 1 : 0, answer: r.response });
        expect(typeof s.scores.exact!.explanation).toBe('string');
      }
      const chat = log.samples.find((s) => s.id === 'chat')!;
      expect(chat.input).toEqual(CHAT);
      expect(log.samples.find((s) => s.id === 'q1')!.input).toEqual([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Which option is right for question 1?' },
      ]);
      expect(log.samples.find((s) => s.id === 'q0')!.input).toEqual([{ role: 'user', content: 'Which option is right for question 0?' }]);

      const row = report.models.find((m) => m.model === log.eval.model)!;
      const exact = log.results.scores.find((s) => s.name === 'exact')!;
      expect(exact.metrics.mean!.value).toBe(row.mean);
      expect(exact.metrics.stderr!.value).toBe(row.stderr);
      const sum = log.samples.reduce((n, s) => n + s.output.usage.total_tokens, 0);
      expect(log.stats.model_usage[log.eval.model]!.total_tokens).toBe(sum);
      expect(log.stats.started_at).not.toBe('');
      expect(Date.parse(log.stats.completed_at)).toBeGreaterThanOrEqual(Date.parse(log.stats.started_at));
    }
  });

  it('a run without scorers: valid logs, empty scores', async () => {
    const e = tmp.open({ tickMs: 20 });
    const runId = await finishedRun(e, false);
    const out = join(tmp.dir, 'plain');
    await e.service.exportRun({ runId, format: 'inspect', outPath: out });
    const logs = readLogs(out);
    expect(logs).toHaveLength(2);
    for (const log of logs) {
      expectValid(log);
      expect(log.results.scores).toEqual([]);
      expect(log.samples.every((s) => Object.keys(s.scores).length === 0)).toBe(true);
    }
  });

  it('reads the records a page at a time and loses none at the page boundaries', async () => {
    const e = tmp.open({ tickMs: 20 });
    const runId = await finishedRun(e, true);
    const run = e.store.queries.getRun(runId)!;
    const report = (r: typeof run, scorer: string) => e.service.report({ runId: r.id, scorer });
    const paged = new InspectExport({ queries: e.store.queries, scores: e.scores, variants: e.scores.variants, report, panoptesVersion: 'test', pageSize: 3 });
    const out = join(tmp.dir, 'paged');
    expect((await paged.write(run, out)).lines).toBe(16);
    const whole = readLogs(join(tmp.dir, 'paged'));
    const direct = join(tmp.dir, 'direct');
    await e.service.exportRun({ runId, format: 'inspect', outPath: direct });
    const samples = (logs: Log[]) => logs.map((l) => l.samples.map((s) => [s.id, s.epoch, s.output.completion, s.scores.exact?.value]));
    expect(samples(whole)).toEqual(samples(readLogs(direct)));
    for (const log of whole) expectValid(log);
  });

  it('a run that does not exist is a not_found error and writes nothing', async () => {
    const e = tmp.open();
    const out = join(tmp.dir, 'none');
    await expect(e.service.exportRun({ runId: 'r-nope', format: 'inspect', outPath: out })).rejects.toMatchObject({ code: 'not_found' });
    expect(existsSync(out)).toBe(false);
  });

  it('refuses --scores with the inspect format', async () => {
    const e = tmp.open();
    await expect(e.dispatcher.call('exportRun', { runId: 'r1', format: 'inspect', outPath: tmp.dir, scores: true })).resolves.toMatchObject({
      ok: false,
      error: { code: 'invalid_input', where: 'format' },
    });
  });

  it('the CLI writes the logs and names them', async () => {
    const dataDir = join(tmp.dir, 'cli-data');
    const scoring = join(tmp.dir, 'scorers.json');
    writeFileSync(scoring, JSON.stringify({ scorers: [{ name: 'exact', type: 'match' }] }));
    const run = await runCli(['run', '--manifest', manifest(tmp.dir), '--models', 'mock-strong,mock-weak', '--epochs', '2', '--scorers', scoring, '--json', '--data-dir', dataDir]);
    expect(run.code).toBe(0);
    const runId = String((JSON.parse(run.stdout.split('\n')[0]!) as { run_id: string }).run_id);
    const out = join(tmp.dir, 'cli-logs');
    const exp = await runCli(['export', runId, '--format', 'inspect', '--out', out, '--data-dir', dataDir]);
    expect(exp.stderr).toBe('');
    expect(exp.code).toBe(0);
    expect(exp.stdout).toContain(`wrote 2 inspect logs (16 samples) to ${out}`);
    const logs = readLogs(out);
    expect(logs).toHaveLength(2);
    for (const log of logs) {
      expectValid(log);
      expect(log.samples.every((s) => s.scores.exact !== undefined)).toBe(true);
    }
    const bad = await runCli(['export', 'r-nope', '--format', 'inspect', '--out', join(tmp.dir, 'cli-none'), '--data-dir', dataDir]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('r-nope');
    expect(existsSync(join(tmp.dir, 'cli-none'))).toBe(false);
  });
});
