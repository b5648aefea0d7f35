/**
 * The `panoptes` command line: each subcommand registers itself from its own file.
 * Runs on: Node (core).
 */
import { Command, CommanderError } from 'commander';
import { packageVersion } from '../paths.js';
import { EXIT, reportError } from './common.js';
import { registerDesktopCommand } from './commands/desktop.js';
import { registerGateCommand } from './commands/gate.js';
import { registerPlanCommand } from './commands/plan.js';
import { registerDecideCommand } from './commands/decide.js';
import { registerDraftCommand } from './commands/draft.js';
import { registerExportCommand } from './commands/export.js';
import { registerImportCommand } from './commands/import.js';
import { registerMetricsCommand } from './commands/metrics.js';
import { registerPackCommand } from './commands/pack.js';
import { registerProbeCommand } from './commands/probe.js';
import { registerResumeCommand } from './commands/resume.js';
import { registerRunCommand } from './commands/run.js';
import { registerRmCommand } from './commands/rm.js';
import { registerRunsCommand } from './commands/runs.js';
import { registerReportCommand } from './commands/report.js';
import { registerScoreCommand } from './commands/score.js';
import { registerServeCommand } from './commands/serve.js';
import { registerStatsCommand } from './commands/stats.js';
import { registerWorkerCommand } from './commands/worker.js';

export function buildProgram(): Command {
  const program = new Command('panoptes')
    .description('Run LLM eval sweeps: every vignette x every model x N epochs, recorded durably.')
    .version(packageVersion())
    .exitOverride()
    .showHelpAfterError();
  registerRunCommand(program);
  registerDraftCommand(program);
  registerResumeCommand(program);
  registerScoreCommand(program);
  registerReportCommand(program);
  registerPlanCommand(program);
  registerGateCommand(program);
  registerDecideCommand(program);
  registerExportCommand(program);
  registerImportCommand(program);
  registerStatsCommand(program);
  registerPackCommand(program);
  registerMetricsCommand(program);
  registerProbeCommand(program);
  registerRunsCommand(program);
  registerRmCommand(program);
  registerWorkerCommand(program);
  registerServeCommand(program);
  registerDesktopCommand(program);
  return program;
}

/** Runs the command line; resolves to the exit status. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.invalid;
    return reportError(err);
  }
  const ran = program.commands.find((c) => c.getOptionValue('exit') !== undefined);
  return (ran?.getOptionValue('exit') as number | undefined) ?? EXIT.ok;
}
