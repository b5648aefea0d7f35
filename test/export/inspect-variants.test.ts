/**
 * `export --format inspect` of a run of prompt variants: inspect compares prompts as evals of one
 * task with different task args, so each arm of the report (a model under one variant) is a log of
 * its own, with `task_args.variant`, only that arm's samples, and the report's row of that arm as
 * its metrics; vignettes naming no variant get a log of their own per model. Every log validated
 * against inspect's EvalLog schema. And each record's stop reason in inspect's words.
 */
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stopReason } from '../../core/service/inspect-log.js';
import { expectValid, readLogs, validateEvalSet, type Log } from '../helpers/inspect-logs.js';
import { useTempEngines } from '../helpers/temp-engine.js';

const tmp = useTempEngines();

/** Six items, each posed under variants "terse" and "polite"; `extra` vignettes name no variant. */
function manifest(name: string, extra: number): string {
  const path = join(tmp.dir, `${name}.jsonl`);
  const lines: unknown[] = [];
  for (let i = 0; i < 6; i++) {
    const target = 'ABCDE'[i % 5]!;
    lines.push({ id: `q${i}-terse`, prompt: `Q${i}? One letter.`, target, metadata: { variant: 'terse', item: `q${i}` } });
    lines.push({ id: `q${i}-polite`, prompt: `Please answer question ${i} with one letter.`, target, metadata: { variant: 'polite', item: `q${i}` } });
  }
  for (let i = 0; i < extra; i++) lines.push({ id: `plain${i}`, prompt: `Plain question ${i}?`, target: 'A' });
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return path;
}

async function exported(name: string, extra: number): Promise<{ logs: Log[]; out: string; runId: string; e: ReturnType<typeof tmp.open> }> {
  const e = tmp.open({ tickMs: 20 });
  e.scoring.start();
  const run = await e.service.createRun({
    manifestPath: manifest(name, extra),
    models: ['mock-strong', 'mock-weak'],
    epochs: 2,
    scorers: { scorers: [{ name: 'exact', type: 'match' as const }] },
  });
  expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
  await e.scoring.finish(run.id);
  const out = join(tmp.dir, `${name}-logs`);
  await e.service.exportRun({ runId: run.id, format: 'inspect', outPath: out });
  return { logs: readLogs(out), out, runId: run.id, e };
}

const armOf = (log: Log): string => `${log.eval.model}|${log.eval.task_args.variant ?? ''}`;

describe('export --format inspect of prompt variants', () => {
  it('one log per model and variant, each with its own samples and its arm of the report as metrics', async () => {
    const { logs, out, runId, e } = await exported('variants', 0);
    expect(logs.map(armOf).sort()).toEqual(['mock-strong|polite', 'mock-strong|terse', 'mock-weak|polite', 'mock-weak|terse']);
    expect(new Set(logs.map((l) => l.eval.eval_id)).size).toBe(4);
    const report = await e.service.report({ runId, scorer: 'exact' });
    expect(report.variants).toEqual(['terse', 'polite']);
    for (const log of logs) {
      expectValid(log);
      const variant = log.eval.task_args.variant!;
      expect(log.eval.dataset.samples).toBe(6);
      expect(log.samples).toHaveLength(12);
      expect(log.samples.every((s) => s.id.endsWith(`-${variant}`))).toBe(true);
      expect(log.results).toMatchObject({ total_samples: 12, completed_samples: 12 });
      const row = report.models.find((m) => m.arm?.model === log.eval.model && m.arm.variant === variant)!;
      const exact = log.results.scores.find((s) => s.name === 'exact')!;
      expect(exact.scored_samples).toBe(row.n);
      expect(exact.scored_samples).toBeGreaterThan(0);
      expect(exact.metrics.mean!.value).toBe(row.mean);
      expect(exact.metrics.stderr!.value).toBe(row.stderr);
      // The metric is the arm's: the mean of its own samples' values.
      expect(row.mean).toBeCloseTo(log.samples.reduce((n, s) => n + s.scores.exact!.value, 0) / log.samples.length, 12);
    }
    const set = JSON.parse(readFileSync(join(out, 'eval-set.json'), 'utf8')) as { tasks: { model: string; task_args: { variant?: string } }[] };
    expect(validateEvalSet(set)).toBe(true);
    // The tasks in the order written: each model, then its variants in the manifest's order.
    expect(set.tasks.map((t) => `${t.model}|${t.task_args.variant ?? ''}`)).toEqual(['mock-strong|terse', 'mock-strong|polite', 'mock-weak|terse', 'mock-weak|polite']);
  });

  it('vignettes naming no variant get a log of their own per model, and no record is left out', async () => {
    const { logs } = await exported('mixed', 3);
    expect(logs.map(armOf).sort()).toEqual(['mock-strong|', 'mock-strong|polite', 'mock-strong|terse', 'mock-weak|', 'mock-weak|polite', 'mock-weak|terse']);
    for (const log of logs) expectValid(log);
    const plain = logs.filter((l) => l.eval.task_args.variant === undefined);
    for (const log of plain) {
      expect(log.eval.dataset.samples).toBe(3);
      expect(log.samples.map((s) => s.id).sort()).toEqual(['plain0', 'plain0', 'plain1', 'plain1', 'plain2', 'plain2']);
    }
    expect(logs.reduce((n, l) => n + l.samples.length, 0)).toBe(2 * 2 * 15);
  });

  it("exported again into the same folder: this run's logs it no longer writes are removed, other runs' kept", async () => {
    const { out, runId, e } = await exported('again', 0);
    const first = readdirSync(out).filter((f) => f.endsWith('.json') && f !== 'eval-set.json');
    const prefix = first[0]!.slice(0, first[0]!.indexOf(`_${runId}_`) + runId.length + 2);
    // As an export made before the variants were split would have left it: one log per model.
    copyFileSync(join(out, first[0]!), join(out, `${prefix}mock-strong.json`));
    const other = '2020-01-01T00-00-00+00-00_rother_mock-strong.json';
    copyFileSync(join(out, first[0]!), join(out, other));
    await e.service.exportRun({ runId, format: 'inspect', outPath: out });
    expect(readdirSync(out).filter((f) => f.endsWith('.json') && f !== 'eval-set.json').sort()).toEqual([...first, other].sort());
  });

  it('a run naming one variant only is exported by model, every record in its log', async () => {
    const e = tmp.open({ tickMs: 20 });
    const path = join(tmp.dir, 'one-variant.jsonl');
    writeFileSync(path, [0, 1, 2].map((i) => JSON.stringify({ id: `v${i}`, prompt: `Q${i}?`, metadata: { variant: 'only' } })).join('\n') + '\n');
    const run = await e.service.createRun({ manifestPath: path, models: ['mock-strong'], epochs: 1 });
    expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
    const out = join(tmp.dir, 'one-variant-logs');
    await e.service.exportRun({ runId: run.id, format: 'inspect', outPath: out });
    const logs = readLogs(out);
    expect(logs.map(armOf)).toEqual(['mock-strong|']);
    expect(logs[0]!.samples).toHaveLength(3);
    expect(logs[0]!.samples[0]!.output.choices[0]!.stop_reason).toBe('stop');
  });
});

describe("a record's stop reason in inspect's words", () => {
  it.each([
    ['stop', 'stop'],
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['STOP', 'stop'],
    ['length', 'max_tokens'],
    ['max_tokens', 'max_tokens'],
    ['MAX_TOKENS', 'max_tokens'],
    ['tool_calls', 'tool_calls'],
    ['tool_use', 'tool_calls'],
    ['content_filter', 'content_filter'],
    ['SAFETY', 'content_filter'],
    ['refusal', 'content_filter'],
    ['something_new', 'unknown'],
    ['__proto__', 'unknown'],
    ['constructor', 'unknown'],
    [undefined, 'unknown'],
  ])('%s → %s', (given, want) => {
    expect(stopReason(given)).toBe(want);
  });
});
