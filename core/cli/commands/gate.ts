/**
 * `panoptes gate --base RUN_A --head RUN_B`: the check a pull request runs. Pairs the two runs by
 * (vignette id, model), compares each scorer per model with the report's statistics
 * (diff = head − base, 95 % interval) and exits 0 when no line is significantly worse by more
 * than `--margin`, 1 when one is, 2 when the runs cannot be compared (saying why).
 * `--markdown FILE` writes the pull-request comment; `--json` prints the result's shape.
 * Runs on: Node (core).
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { PanoptesError } from '../../domain.js';
import { addCommonOptions, EXIT, reportError, type CommonOptions } from '../common.js';

interface GateCliOptions extends CommonOptions {
  base: string;
  head: string;
  margin?: number;
  scorer?: string[];
  markdown?: string;
  json?: boolean;
}

function parseMargin(value: string): number {
  const n = Number(value);
  if (!(value.trim() !== '' && n >= 0 && n <= 1)) throw new PanoptesError('invalid_input', `--margin must be a number from 0 to 1, got "${value}"`, { where: '--margin' });
  return n;
}

export function registerGateCommand(program: Command): void {
  addCommonOptions(
    program
      .command('gate')
      .description('exit 0 unless the head run is significantly worse than the base run (1), or they cannot be compared (2)')
      .requiredOption('--base <run-id>', 'the run before the change')
      .requiredOption('--head <run-id>', 'the run after the change (same manifest and models)')
      .option('--margin <d>', 'tolerated drop: worse means the 95% interval of head − base lies wholly below −d (default 0)', parseMargin)
      .option('--scorer <name...>', 'the scorers to gate on (default: every scorer both runs have)')
      .option('--markdown <file>', 'write a Markdown summary for a pull-request comment')
      .option('--json', 'print the result as JSON'),
  ).action(async (opts: GateCliOptions, cmd: Command) => {
    let engine;
    try {
      const [{ openReadingEngine }, { formatGate, formatGateMarkdown }, { gateExitCode }] = await Promise.all([
        import('../open-engine.js'),
        import('../../scoring/format-gate.js'),
        import('../../scoring/gate.js'),
      ]);
      engine = openReadingEngine(opts);
      const result = await engine.service.gate({
        base: opts.base,
        head: opts.head,
        ...(opts.margin === undefined ? {} : { margin: opts.margin }),
        ...(opts.scorer === undefined ? {} : { scorers: opts.scorer }),
      });
      if (opts.markdown !== undefined) {
        try {
          await writeFile(opts.markdown, formatGateMarkdown(result));
        } catch (err) {
          throw new PanoptesError('invalid_input', `--markdown ${opts.markdown}: cannot write it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { where: '--markdown' });
        }
      }
      process.stdout.write(opts.json ? JSON.stringify(result) + '\n' : formatGate(result).join('\n') + '\n');
      cmd.setOptionValue('exit', gateExitCode(result));
    } catch (err) {
      reportError(err);
      // Exit 1 means the head is worse, and CI fails the change on it: a gate that could not run says 2.
      cmd.setOptionValue('exit', EXIT.invalid);
    } finally {
      await engine?.close();
    }
  });
}
