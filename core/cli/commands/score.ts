/**
 * `panoptes score RUN_ID --scorers FILE`: score a stored run with the scorers of a scoring file,
 * without calling any model for the sweep, and print how far each scorer got. Killed half-way,
 * `panoptes resume` (or the next `score`) goes on where it stopped.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import type { ScoringStatus } from '../../service/contract.js';
import { EXIT, addCommonOptions, formatInt, reportError, type CommonOptions, addScoringOptions } from '../common.js';

/** One line per scorer: name, version, layer, and records done, pending and failed. */
export function printScoringStatus(status: ScoringStatus, out: NodeJS.WritableStream = process.stdout): void {
  for (const s of status.scorers) {
    out.write(
      `${s.name} (${s.layer}, version ${s.version}): ${formatInt(s.done)} scored` +
        `${s.pending > 0 ? `, ${formatInt(s.pending)} pending` : ''}${s.failed > 0 ? `, ${formatInt(s.failed)} could not be scored` : ''}` +
        `${s.stopped === null ? '' : `; stopped: ${s.stopped}`}\n`,
    );
  }
}

/**
 * A line per scorer that could not score some records (naming it and the last reason: a judge's
 * missing key, say) or was stopped for good: what makes `run --scorers` and `score` exit non-zero.
 */
export function unscoredLines(status: ScoringStatus): string[] {
  return status.scorers.flatMap((s) => [
    ...(s.failed > 0 ? [`scorer ${s.name} could not score ${formatInt(s.failed)} record${s.failed === 1 ? '' : 's'}: ${s.lastError ?? 'no reason kept'}\n`] : []),
    ...(s.stopped !== null ? [`scorer ${s.name} was stopped: ${s.stopped}\n`] : []),
  ]);
}

export function registerScoreCommand(program: Command): void {
  addScoringOptions(addCommonOptions(
    program
      .command('score')
      .description('score a stored run with a scoring file (no model is called again)')
      .argument('<run-id>', 'the run to score')
      .requiredOption('--scorers <file>', 'a scoring file (JSON or YAML)')
      .option('--json', 'print the scoring status as JSON'),
  )).action(async (runId: string, opts: CommonOptions & { scorers: string; json?: boolean }, cmd: Command) => {
    let engine;
    try {
      const [{ readScoringFile }, { openCliEngine }] = await Promise.all([import('../scoring-file.js'), import('../open-engine.js')]);
      const scorers = await readScoringFile(opts.scorers);
      engine = openCliEngine(opts);
      await engine.service.scoreRun({ runId, scorers });
      engine.scoring.start();
      await engine.scoring.finish(runId);
      const status = await engine.service.scoringStatus({ runId });
      if (opts.json) process.stdout.write(JSON.stringify(status) + '\n');
      else printScoringStatus(status);
      const unscored = unscoredLines(status);
      for (const line of unscored) process.stderr.write(line);
      cmd.setOptionValue('exit', unscored.length > 0 ? EXIT.failed : EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
