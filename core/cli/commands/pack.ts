/**
 * `panoptes pack SOURCE`: a folder, a .tar.gz or a git diff packed into a JSONL manifest of
 * vignettes fitted to the smallest context window of the chosen models.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { EXIT, addCommonOptions, dataDirOf, parsePositiveInt, reportError, type CommonOptions } from '../common.js';
import type { PackRunOptions } from '../pack-run.js';

/** The pack's own options are runPack's (the type only: pack-run.ts loads when the command runs). */
type PackCliOptions = CommonOptions & Omit<PackRunOptions, 'dataDir' | 'catalog'>;

export function registerPackCommand(program: Command): void {
  addCommonOptions(
    program
      .command('pack')
      .description('pack a folder, a .tar.gz or a git diff into vignettes fitted to the models\' smallest context window')
      .argument('<source>', 'a folder, a .tar.gz file, or a git folder with --diff')
      .requiredOption('--models <list>', 'comma-separated logical model ids the pack is for (it fits the smallest window among them)')
      .requiredOption('--out <file>', 'the JSONL manifest to write')
      .option('--prompt <text-or-file>', 'the instruction put before the files: a file\'s content when a file has that name, else the text itself')
      .option('--diff <base..head>', 'pack only the files changed between two refs of a git folder, with the unified diff')
      .option('--split <folder|N>', 'when one vignette does not fit: one per top-level folder, or one per N files')
      .option('--max-bytes <n>', 'refuse a source holding more bytes of files to pack (default 52428800: 50 MB)', parsePositiveInt('--max-bytes'))
      .option('--answer-tokens <n>', 'tokens kept free for the answer (default: 4096, at most a quarter of the window)', parsePositiveInt('--answer-tokens')),
  ).action(async (source: string, opts: PackCliOptions, cmd: Command) => {
    try {
      const { runPack } = await import('../pack-run.js');
      await runPack(source, { ...opts, dataDir: dataDirOf(opts) });
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    }
  });
}
