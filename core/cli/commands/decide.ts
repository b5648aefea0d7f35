/**
 * `panoptes decide RUN_ID`: the run's vignettes in a seeded order, every pair of models' anytime-
 * valid confidence sequence after each batch, and where each pair is decided (a winner), equivalent
 * (inside ±margin) or undecided, with the calls and dollars stopping there saves. Deterministic: the
 * same stored scores and seed give the same answer. `--json` prints its shape.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { PanoptesError } from '../../domain.js';
import { addCommonOptions, EXIT, parsePositiveInt, reportError, type CommonOptions } from '../common.js';

interface DecideCliOptions extends CommonOptions {
  scorer?: string;
  margin?: number;
  seed?: number;
  batch?: number;
  alpha?: number;
  maxCalls?: number;
  json?: boolean;
}

/** A number from 0 to below 1 (a margin, an alpha), refused naming its flag. */
export function share(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !(n >= 0 && n < 1)) throw new PanoptesError('invalid_input', `${name} must be a number from 0 to below 1, got "${value}"`, { where: name });
    return n;
  };
}

/** An order's seed: a whole number from 0 to 2^32 − 1, refused naming its flag. */
export function orderSeed(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!(Number.isInteger(n) && n >= 0 && n <= 0xffffffff)) throw new PanoptesError('invalid_input', `${name} must be a whole number from 0 to 4294967295, got "${value}"`, { where: name });
    return n;
  };
}

export function registerDecideCommand(program: Command): void {
  addCommonOptions(
    program
      .command('decide')
      .description('where each pair of models is decided, in a seeded order with anytime-valid intervals, and what stopping there saves')
      .argument('<run-id>', 'a scored run')
      .option('--scorer <name>', 'the scorer (default: the first)')
      .option('--margin <d>', 'stop a pair as equivalent once its interval lies inside ±d (default 0: never)', share('--margin'))
      .option('--seed <n>', 'the order\'s seed (default 1; a run posed until decided: its own)', orderSeed('--seed'))
      .option('--batch <n>', 'vignettes between two looks (default 10)', parsePositiveInt('--batch'))
      .option('--alpha <a>', 'the chance of any wrong decision, split over the pairs (default 0.05)', share('--alpha'))
      .option('--max-calls <n>', 'a budget of the sweep\'s calls: stop before a batch that would pass it (a run posed until decided: its own)', parsePositiveInt('--max-calls'))
      .option('--json', 'print the decision as JSON'),
  ).action(async (runId: string, opts: DecideCliOptions, cmd: Command) => {
    let engine;
    try {
      const [{ openReadingEngine }, { formatDecision }] = await Promise.all([import('../open-engine.js'), import('../../scoring/format-decision.js')]);
      engine = openReadingEngine(opts);
      const report = await engine.service.decide({
        runId,
        ...(opts.scorer !== undefined ? { scorer: opts.scorer } : {}),
        ...(opts.margin !== undefined ? { margin: opts.margin } : {}),
        ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
        ...(opts.batch !== undefined ? { batch: opts.batch } : {}),
        ...(opts.alpha !== undefined ? { alpha: opts.alpha } : {}),
        ...(opts.maxCalls !== undefined ? { maxCalls: opts.maxCalls } : {}),
      });
      process.stdout.write(opts.json ? JSON.stringify(report) + '\n' : formatDecision(report).join('\n') + '\n');
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
