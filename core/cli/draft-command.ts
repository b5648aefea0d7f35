/**
 * A run's draft (what Run again would create) as the `panoptes run` command that creates it:
 * every field a flag of `run`, the scorers and a template that is not a built-in written as files
 * beside it (a scoring file and a template file, as `run --scorers` and `--template` read them).
 * Sampling fields `run` has no flag for are named, so nothing is dropped unsaid.
 * Runs on: Node (core).
 */
import type { CreateRunInput } from '../service/contract.js';

export interface DraftCommand {
  /** The arguments after `panoptes`. */
  argv: string[];
  /** Files to write before the command runs: path to content. */
  files: Array<{ path: string; text: string }>;
  /** What the command cannot carry (send the JSON draft to `POST /runs` for those). */
  unsaid: string[];
}

/** A scoring file's definitions: a code plugin keeps its code (the draft holds it), not the file it was read from. */
function scoringFileText(scorers: NonNullable<CreateRunInput['scorers']>): string {
  const defs = scorers.scorers.map((d) => {
    if (d.type !== 'code' || d.code === undefined) return d;
    const { file: _file, ...rest } = d;
    return rest;
  });
  return JSON.stringify({ scorers: defs }, null, 2) + '\n';
}

export function draftCommand(draft: CreateRunInput, files: { scorers: string; template: string }): DraftCommand {
  const argv = ['run', '--manifest', draft.manifestPath, '--models', draft.models.join(','), '--epochs', String(draft.epochs)];
  const out: DraftCommand['files'] = [];
  const unsaid: string[] = [];
  const flag = (name: string, value: string | number | undefined) => {
    if (value !== undefined) argv.push(name, String(value));
  };
  flag('--concurrency', draft.concurrency);
  flag('--privacy', draft.privacy);
  if (draft.skipPromptCache) argv.push('--skip-prompt-cache');
  if (draft.shareCacheAcrossEpochs) argv.push('--share-cache-across-epochs');
  flag('--end-with-failures', draft.endWithFailures);
  const { temperature, maxTokens, seed, reasoningEffort, thinkingBudget, ...rest } = draft.sampling ?? {};
  flag('--temperature', temperature);
  flag('--max-tokens', maxTokens);
  flag('--seed', seed);
  flag('--reasoning-effort', reasoningEffort);
  flag('--thinking-budget', thinkingBudget);
  for (const [key, value] of Object.entries(rest)) if (value !== undefined) unsaid.push(`sampling.${key}`);
  if (draft.scorers) {
    out.push({ path: files.scorers, text: scoringFileText(draft.scorers) });
    argv.push('--scorers', files.scorers);
  }
  if (draft.template !== undefined) {
    // A built-in's name is a word; the template itself goes to a file.
    const builtin = /^[a-z_]+$/.test(draft.template);
    if (!builtin) out.push({ path: files.template, text: draft.template + '\n' });
    argv.push('--template', builtin ? draft.template : files.template);
  }
  const decided = draft.untilDecided;
  if (decided) {
    argv.push('--until-decided');
    flag('--order-seed', decided.orderSeed);
    flag('--batch', decided.batch);
    flag('--alpha', decided.alpha);
    flag('--margin', decided.margin);
    flag('--decide-scorer', decided.scorer);
    flag('--max-calls', decided.maxCalls);
  }
  flag('--name', draft.name);
  return { argv, files: out, unsaid };
}

/** An argument as a POSIX shell reads it back: bare when it is plain, else single-quoted. */
export function shellWord(arg: string): string {
  return /^[\w./:=,@+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
