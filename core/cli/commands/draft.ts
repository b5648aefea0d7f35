/**
 * `panoptes draft RUN_ID`: what Run again would create from a run (manifest, models, epochs,
 * options with sampling and reasoning, name, scorers, template), printed as JSON, a `createRun`
 * body to change and send (`POST /runs`). With `--command DIR`: the `panoptes run` command that
 * creates it, its scoring file and template written into DIR, to edit and run.
 * Runs on: Node (core).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { EXIT, addCommonOptions, reportError, type CommonOptions } from '../common.js';

export function registerDraftCommand(program: Command): void {
  addCommonOptions(
    program
      .command('draft')
      .description('what running a run again would create: its createRun JSON, or with --command the `panoptes run` command')
      .argument('<run-id>', 'the run to start from')
      .option('--command <dir>', "print the `panoptes run` command instead, writing the run's scoring file and template into DIR"),
  ).action(async (runId: string, opts: CommonOptions & { command?: string }, cmd: Command) => {
    let engine;
    try {
      const { openReadingEngine } = await import('../open-engine.js');
      engine = openReadingEngine(opts);
      const draft = await engine.service.runDraft({ runId });
      if (opts.command === undefined) process.stdout.write(JSON.stringify(draft, null, 2) + '\n');
      else {
        const { draftCommand, shellWord } = await import('../draft-command.js');
        const dir = resolve(opts.command);
        const made = draftCommand(draft, { scorers: join(dir, `${runId}-scorers.json`), template: join(dir, `${runId}-template.json`) });
        if (made.files.length > 0) mkdirSync(dir, { recursive: true });
        for (const f of made.files) writeFileSync(f.path, f.text);
        for (const field of made.unsaid) process.stderr.write(`${field} has no flag of panoptes run: it is in the JSON draft (panoptes draft ${runId}), for POST /runs\n`);
        process.stdout.write(['panoptes', ...made.argv].map(shellWord).join(' ') + '\n');
      }
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}
