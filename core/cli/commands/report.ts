/**
 * `panoptes report RUN_ID`: the leaderboard of a scored run with 95 % intervals, consistency across
 * epochs and every pair of models compared, as readable text, or with --json the report's shape.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { PanoptesError } from '../../domain.js';
import type { EpochReducer } from '../../service/contract.js';
import { EXIT, addCommonOptions, reportError, type CommonOptions } from '../common.js';

const REDUCERS: readonly EpochReducer[] = ['mean', 'majority', 'max'];

interface ReportCliOptions extends CommonOptions {
  scorer?: string;
  by?: string;
  reducer?: string;
  json?: boolean;
}

export function registerReportCommand(program: Command): void {
  addCommonOptions(
    program
      .command('report')
      .description("a scored run's leaderboard with 95% intervals and paired comparisons")
      .argument('<run-id>', 'the run to report')
      .option('--scorer <name>', 'the scorer to report (default: the first)')
      .option('--by <key>', 'a metadata key: cluster standard errors by it and slice the leaderboard')
      .option('--reducer <r>', `how epochs reduce to one value per vignette: ${REDUCERS.join(' | ')} (default mean)`)
      .option('--json', 'print the report as JSON'),
  ).action(async (runId: string, opts: ReportCliOptions, cmd: Command) => {
    let engine;
    try {
      if (opts.reducer !== undefined && !REDUCERS.includes(opts.reducer as EpochReducer)) {
        throw new PanoptesError('invalid_input', `--reducer must be one of ${REDUCERS.join(', ')}, got "${opts.reducer}"`, { where: '--reducer' });
      }
      const [{ openCliEngine }, { formatScoreReport }] = await Promise.all([import('../open-engine.js'), import('../../scoring/format-report.js')]);
      engine = openCliEngine(opts);
      const report = await engine.service.report({
        runId,
        ...(opts.scorer === undefined ? {} : { scorer: opts.scorer }),
        ...(opts.by === undefined ? {} : { by: opts.by }),
        ...(opts.reducer === undefined ? {} : { reducer: opts.reducer as EpochReducer }),
      });
      process.stdout.write(opts.json ? JSON.stringify(report) + '\n' : formatScoreReport(report).join('\n') + '\n');
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
