/**
 * `panoptes desktop` (what `npm start` runs): the desktop app where Electron can start, the same
 * app in the browser where it cannot (desktop-plan.ts decides, desktop-launch.ts launches).
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { addCommonOptions } from '../common.js';
import type { DesktopOptions } from '../desktop-launch.js';
import { parsePort } from './serve.js';

export function registerDesktopCommand(program: Command): void {
  addCommonOptions(
    program
      .command('desktop')
      .description('open the desktop app (or, where Electron cannot start, the same app in the browser)')
      .option('--port <n>', 'port for the browser app when Electron cannot start (0: any free port)', parsePort, 0),
  ).action(async (opts: DesktopOptions, cmd: Command) => {
    const { desktopCommand } = await import('../desktop-launch.js');
    cmd.setOptionValue('exit', await desktopCommand(opts, cmd.getOptionValueSource('port') !== 'default'));
  });
}
