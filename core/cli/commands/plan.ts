/**
 * `panoptes plan`: before a sweep, how many vignettes at 1, 2, 3, 5 epochs detect a difference
 * `--delta` with `--power`, what each design costs and how long it takes, from a pilot run
 * (`--from RUN`) or from guesses (`--accuracy 0.8,0.7 [--flip-rate F] [--correlation R]`).
 * `--json` prints the plan's shape.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { PanoptesError } from '../../domain.js';
import { addCommonOptions, EXIT, reportError, type CommonOptions } from '../common.js';

interface PlanCliOptions extends CommonOptions {
  from?: string;
  models?: string;
  scorer?: string;
  accuracy?: number[];
  flipRate?: number;
  correlation?: number;
  judges?: string;
  delta: number;
  power?: number;
  alpha?: number;
  epochs?: number[];
  manifest?: string;
  json?: boolean;
}

function number(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw new PanoptesError('invalid_input', `${name} must be a number, got "${value}"`, { where: name });
    return n;
  };
}

function numbers(name: string) {
  return (value: string): number[] => value.split(',').map((v) => number(name)(v.trim()));
}

export function registerPlanCommand(program: Command): void {
  addCommonOptions(
    program
      .command('plan')
      .description('before a sweep: the vignettes x epochs that detect a difference, with each design\'s cost and time')
      .requiredOption('--delta <d>', 'the difference to detect (a share, e.g. 0.05)', number('--delta'))
      .option('--from <run-id>', 'a scored pilot run: its per-vignette differences, epoch variance, tokens and judges')
      .option('--models <list>', 'comma-separated models to compare (default with --from: the pilot\'s)')
      .option('--scorer <name>', 'the pilot\'s scorer (default: its first)')
      .option('--accuracy <list>', 'without a pilot: each model\'s guessed accuracy, in --models order', numbers('--accuracy'))
      .option('--flip-rate <f>', 'the chance two epochs of one vignette disagree (without it, epochs are planned as no help)', number('--flip-rate'))
      .option('--judges <list>', 'without a pilot: the judge models the scorers will ask, each once per record (their cost from their history here)')
      .option('--correlation <r>', 'guesses: how alike the models find vignettes hard, -1..1 (default 0)', number('--correlation'))
      .option('--power <p>', 'the chance to detect the difference (default 0.8)', number('--power'))
      .option('--alpha <a>', 'the false-positive rate over all pairs (default 0.05)', number('--alpha'))
      .option('--epochs <list>', 'the grid\'s epochs (default 1,2,3,5)', numbers('--epochs'))
      .option('--manifest <file>', 'the manifest the sweep will run: its size bounds the designs')
      .option('--json', 'print the plan as JSON'),
  ).action(async (opts: PlanCliOptions, cmd: Command) => {
    let engine;
    try {
      const [{ openReadingEngine }, { formatPlan }] = await Promise.all([import('../open-engine.js'), import('../../scoring/format-plan.js')]);
      engine = openReadingEngine(opts);
      const models = opts.models?.split(',').map((m) => m.trim()).filter(Boolean);
      const plan = await engine.service.plan({
        delta: opts.delta,
        ...(models ? { models } : {}),
        ...(opts.from !== undefined ? { fromRun: opts.from } : {}),
        ...(opts.scorer !== undefined ? { scorer: opts.scorer } : {}),
        ...(opts.accuracy !== undefined ? { accuracy: opts.accuracy } : {}),
        ...(opts.flipRate !== undefined ? { flipRate: opts.flipRate } : {}),
        ...(opts.correlation !== undefined ? { correlation: opts.correlation } : {}),
        ...(opts.judges !== undefined ? { judges: opts.judges.split(',').map((j) => j.trim()).filter(Boolean) } : {}),
        ...(opts.power !== undefined ? { power: opts.power } : {}),
        ...(opts.alpha !== undefined ? { alpha: opts.alpha } : {}),
        ...(opts.epochs !== undefined ? { epochs: opts.epochs } : {}),
        ...(opts.manifest !== undefined ? { manifestPath: opts.manifest } : {}),
      });
      process.stdout.write(opts.json ? JSON.stringify(plan) + '\n' : formatPlan(plan).join('\n') + '\n');
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
