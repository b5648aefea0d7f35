/**
 * `panoptes export RUN_ID --out FILE`: a run's responses as JSONL (or CSV), one line per
 * (model, epoch, vignette), with --scores each with its scores (JSONL: a `scores` object keyed by
 * scorer; CSV: a column per scorer); `--format scores`: the scores alone, one line per (record,
 * scorer, attempt, judge); streamed from the database. `--format inspect --out DIR`: one inspect_ai log per model.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { EXIT, addCommonOptions, reportError, type CommonOptions } from '../common.js';

export function registerExportCommand(program: Command): void {
  addCommonOptions(
    program
      .command('export')
      .description("write a run's responses to a file")
      .argument('<run-id>', 'the run to export')
      .requiredOption('--out <path>', 'where to write: a file, or a folder for --format inspect')
      .option('--format <format>', 'jsonl, csv, inspect (inspect_ai .json logs, one per model) or scores (one line per record, scorer, attempt and judge)', 'jsonl')
      .option('--scores', 'each record with its scores: JSONL, a "scores" object keyed by scorer; CSV, a column per scorer'),
  ).action(async (runId: string, opts: CommonOptions & { out: string; format: 'jsonl' | 'csv' | 'inspect' | 'scores'; scores?: boolean }, cmd: Command) => {
    let engine;
    try {
      const { openReadingEngine } = await import('../open-engine.js');
      engine = openReadingEngine(opts);
      const res = await engine.service.exportRun({ runId, outPath: opts.out, format: opts.format, ...(opts.scores ? { scores: true } : {}) });
      if (res.files !== undefined) {
        process.stdout.write(`wrote ${res.files.length} inspect logs (${res.lines} samples) to ${res.path}\n`);
        for (const f of res.files) process.stdout.write(`  ${f}\n`);
      } else process.stdout.write(`wrote ${res.lines} lines to ${res.path}\n`);
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
