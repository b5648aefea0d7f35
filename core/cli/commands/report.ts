/**
 * `panoptes report RUN_ID`: the leaderboard of a scored run with 95 % intervals, consistency across
 * epochs and every pair of models compared, as readable text, or with --json the report's shape.
 * With `--against OTHER`: the two runs of one manifest compared, paired by vignette id, model by
 * model (OTHER − RUN_ID), as the app's Compare runs shows them.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { PanoptesError } from '../../domain.js';
import type { EpochReducer } from '../../service/contract.js';
import { DEFAULT_REPORT_VIGNETTES } from '../../service/report-vignettes.js';
import { EXIT, addCommonOptions, reportError, type CommonOptions } from '../common.js';

const REDUCERS: readonly EpochReducer[] = ['mean', 'majority', 'max'];
const ATTEMPTS = ['first', 'final'] as const;

interface ReportCliOptions extends CommonOptions {
  scorer?: string;
  by?: string;
  reducer?: string;
  json?: boolean;
  against?: string;
  attempt?: string;
  html?: string;
  htmlVignettes?: string;
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
      .option('--attempt <a>', 'with retries on hard fails: first (default: the sweep\'s own records) | final (each record\'s last attempt)')
      .option('--against <run-id>', 'compare with another run of the same manifest, paired by vignette id (diff = that run − this one)')
      .option('--json', 'print the report as JSON')
      .option('--html <file>', 'write the report as one self-contained HTML page to FILE')
      .option('--html-vignettes <n>', `with --html: vignettes its table lists, the first N (default ${DEFAULT_REPORT_VIGNETTES})`),
  ).action(async (runId: string, opts: ReportCliOptions, cmd: Command) => {
    let engine;
    try {
      if (opts.reducer !== undefined && !REDUCERS.includes(opts.reducer as EpochReducer)) {
        throw new PanoptesError('invalid_input', `--reducer must be one of ${REDUCERS.join(', ')}, got "${opts.reducer}"`, { where: '--reducer' });
      }
      if (opts.attempt !== undefined && !ATTEMPTS.includes(opts.attempt as (typeof ATTEMPTS)[number])) {
        throw new PanoptesError('invalid_input', `--attempt must be one of ${ATTEMPTS.join(', ')}, got "${opts.attempt}"`, { where: '--attempt' });
      }
      if (opts.against !== undefined && opts.attempt !== undefined) {
        throw new PanoptesError('invalid_input', '--attempt does not apply to a comparison of two runs (--against)', { where: '--attempt' });
      }
      if (opts.against !== undefined && opts.by !== undefined) {
        throw new PanoptesError('invalid_input', '--by does not apply to a comparison of two runs (--against)', { where: '--by' });
      }
      const htmlVignettes = opts.htmlVignettes === undefined ? DEFAULT_REPORT_VIGNETTES : Number(opts.htmlVignettes);
      if (!Number.isInteger(htmlVignettes) || htmlVignettes < 0) {
        throw new PanoptesError('invalid_input', `--html-vignettes must be a whole number of vignettes (0 or more), got "${opts.htmlVignettes}"`, { where: '--html-vignettes' });
      }
      if (opts.htmlVignettes !== undefined && opts.html === undefined) {
        throw new PanoptesError('invalid_input', '--html-vignettes needs --html FILE', { where: '--html-vignettes' });
      }
      if (opts.html !== undefined && (opts.against !== undefined || opts.json)) {
        throw new PanoptesError('invalid_input', '--html writes one run\'s report: not with --against or --json', { where: '--html' });
      }
      const [{ openReadingEngine }, { formatRunComparison, formatScoreReport }] = await Promise.all([
        import('../open-engine.js'),
        import('../../scoring/format-report.js'),
      ]);
      engine = openReadingEngine(opts);
      const shared = {
        scorer: opts.scorer,
        reducer: opts.reducer as EpochReducer | undefined,
      };
      if (opts.against !== undefined) {
        const comparison = await engine.service.compareRuns({ runA: runId, runB: opts.against, ...shared });
        process.stdout.write(opts.json ? JSON.stringify(comparison) + '\n' : formatRunComparison(comparison).join('\n') + '\n');
      } else {
        const asked = { runId, ...shared, by: opts.by, attempt: opts.attempt as (typeof ATTEMPTS)[number] | undefined };
        if (opts.html !== undefined) {
          const written = await engine.service.reportHtml({ ...asked, vignettes: htmlVignettes, outPath: opts.html });
          process.stdout.write(`wrote ${opts.html}: the report of run ${runId} (scorer ${written.scorer}), ${written.rows} of ${written.total} vignettes listed\n`);
        } else {
          const report = await engine.service.report(asked);
          process.stdout.write(opts.json ? JSON.stringify(report) + '\n' : formatScoreReport(report).join('\n') + '\n');
        }
      }
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
