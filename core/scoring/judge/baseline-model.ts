/**
 * A pairwise judge's baseline model is one of the judged run's models: its answer to the same
 * vignette and epoch is read from the run beside each record. A baseline the run does not have
 * could never answer, so the scoring file is refused, naming the field, before anything is stored.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../../domain.js';
import type { ScoringConfig } from '../scoring-config.js';

export function refuseBaselinesOutsideRun(config: ScoringConfig, models: readonly string[], whose: string): void {
  config.scorers.forEach((d, i) => {
    if (d.type !== 'judge' || d.baseline === undefined || models.includes(d.baseline)) return;
    const where = `scorers.${i}.baseline`;
    throw new PanoptesError(
      'invalid_input',
      `${where}: "${d.baseline}" is not a model of ${whose} (${models.join(', ')}); a pairwise judge compares with one of the run's models, or with a baselineFile`,
      { where },
    );
  });
}
