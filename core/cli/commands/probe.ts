/**
 * `panoptes probe`: one short call (16 output tokens) to every host of the catalog's models (or
 * of `--models`), so a dead key or a retired model shows before a sweep starts on it. Prints each
 * host's outcome; exits 1 when any host failed. Hosts without their key are reported, not called.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { EXIT, addCommonOptions, formatInt, printTable, reportError, type CommonOptions } from '../common.js';

interface ProbeCliOptions extends CommonOptions {
  models?: string;
  json?: boolean;
}

export function registerProbeCommand(program: Command): void {
  addCommonOptions(
    program
      .command('probe')
      .description('send one 16-token call to every host and report which answer')
      .option('--models <list>', 'comma-separated logical models (default: every model in the catalog)')
      .option('--json', 'print the probe report as JSON'),
  ).action(async (opts: ProbeCliOptions, cmd: Command) => {
    let engine;
    try {
      const { openCliEngine } = await import('../open-engine.js');
      engine = openCliEngine(opts);
      const models = opts.models?.split(',').map((m) => m.trim()).filter(Boolean);
      const report = await engine.service.probe({ models });
      if (opts.json) {
        process.stdout.write(JSON.stringify(report) + '\n');
      } else {
        printTable([
          ['host', 'model', 'outcome', 'ms', 'now', 'why'],
          ...report.results.map((r) => [r.host, r.model, r.status, formatInt(r.latencyMs), r.state, r.message ?? '']),
        ]);
        process.stdout.write(`${report.ok} answered, ${report.failed} did not\n`);
      }
      cmd.setOptionValue('exit', report.failed === 0 ? EXIT.ok : EXIT.failed);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
