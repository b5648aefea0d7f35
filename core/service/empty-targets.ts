/**
 * An empty target, refused when scorers are attached: `includes` would find it in every answer,
 * and `match` and `choice` have nothing to compare with. A scoring request (with a run, or for a
 * stored run) whose rules read the target is refused, naming the vignette's manifest line, before
 * anything is stored; a record that reaches a rule with one anyway fails to score, never passes.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';
import { manifestLineOf } from '../manifest.js';
import type { ScoringConfig } from '../scoring/scoring-config.js';

/** The first scorer of the file whose verdict rests on the vignette's target, with its place. */
function firstTargetReader(config: ScoringConfig): { name: string; type: string; at: number } | null {
  const at = config.scorers.findIndex((d) => d.type === 'match' || d.type === 'choice' || (d.type === 'includes' && d.values === undefined));
  return at < 0 ? null : { name: config.scorers[at]!.name, type: config.scorers[at]!.type, at };
}

/** Whether a vignette's target is empty as far as the rules are concerned. */
export function isEmptyTarget(target: string | undefined): boolean {
  return target !== undefined && target.trim() === '';
}

/**
 * Refuses a scoring file with a rule that reads targets when a vignette of the run (`empty`, found
 * by the caller) has an empty one; the message names the manifest's line when the file still holds it.
 */
export async function refuseEmptyTarget(config: ScoringConfig, empty: { idx: number; id: string } | null, manifestPath: string): Promise<void> {
  const reader = firstTargetReader(config);
  if (reader === null || empty === null) return;
  const line = await manifestLineOf(manifestPath, empty.id);
  const where = line === null ? manifestPath : `${manifestPath}:${line}`;
  const which = line === null ? `vignette "${empty.id}" (number ${empty.idx + 1})` : `vignette "${empty.id}"`;
  throw new PanoptesError(
    'invalid_input',
    `${where}: ${which} has an empty "target", and scorers.${reader.at} ("${reader.name}", ${reader.type}) compares answers with it: an empty target would pass every answer. Give the vignette its answer or leave "target" out${reader.type === 'includes' ? ', or give the scorer its own "values"' : ''}`,
    { where },
  );
}
