/**
 * Run again: the new run a finished one would be made again as — its manifest, models, epochs,
 * options (sampling with its reasoning settings, privacy, the cache choice), name, scorers (each
 * name's newest version, the one its report shows) and staged template (a built-in's name when
 * the run's is that built-in as it stands, else the template itself as JSON, which the template
 * parser reads like YAML). `retryRun` with scope `all` creates it at once; `runDraft` returns it
 * for New run to show filled in, to change before Create.
 * Runs on: Node (core).
 */
import { isDeepStrictEqual } from 'node:util';
import type { Run, StagedTemplate } from '../domain.js';
import { BUILTIN_TEMPLATES } from '../templates/builtin-templates.js';
import { templateFrom } from '../templates/template-file.js';
import type { ScorerDefinition } from '../scoring/scoring-config.js';
import type { CreateRunInput } from './contract.js';

/** A scorer version attached to a run, in the order attached (later versions of a name replace earlier ones). */
interface AttachedScorer {
  name: string;
  definition: unknown;
}

export function runAgainInput(run: Run, attached: readonly AttachedScorer[]): CreateRunInput {
  const { concurrency, sampling, privacy, skipPromptCache, shareCacheAcrossEpochs, endWithFailures, untilDecided, template } = run.options;
  const newest = new Map(attached.map((s) => [s.name, s.definition as ScorerDefinition]));
  const scorers = [...newest.values()];
  return {
    ...(scorers.length > 0 ? { scorers: { scorers } } : {}),
    ...(run.name === null ? {} : { name: run.name }),
    manifestPath: run.manifestPath,
    models: run.models,
    epochs: run.epochs,
    concurrency,
    privacy,
    skipPromptCache,
    shareCacheAcrossEpochs,
    ...(endWithFailures === undefined ? {} : { endWithFailures }),
    ...(untilDecided === undefined ? {} : { untilDecided }),
    ...(template === undefined ? {} : { template: templateText(template) }),
    ...(Object.keys(sampling).length > 0 ? { sampling } : {}),
  };
}

/** What `createRun` takes for a run's checked template: the built-in's name if it is one unchanged, else its JSON. */
function templateText(template: StagedTemplate): string {
  if (Object.hasOwn(BUILTIN_TEMPLATES, template.name) && isDeepStrictEqual(templateFrom(template.name, 'template'), template)) return template.name;
  return JSON.stringify(template, null, 2);
}
