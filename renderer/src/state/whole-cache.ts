/**
 * Whether every answer of a run about to be created would come from the prompt cache: an earlier
 * run that ended done, with no call failed, asked the same manifest (same path and vignette count)
 * of at least these models for at least these epochs, with the same sampling and privacy and the
 * cache on both times. Its answers are cached under exactly the keys the new run's calls would
 * look up (the cache keys on model, messages, sampling, privacy and epoch), so the new run would
 * repeat them and a Compare of the two would show no difference. A sufficient condition, not a
 * necessary one: answers can also be cached by several earlier runs together.
 * Runs on: renderer.
 */
import type { RunSummary } from '../api/types.js';

export interface PlannedRun {
  manifestPath: string;
  vignettes: number;
  models: readonly string[];
  epochs: number;
  privacy: string;
  useCache: boolean;
  shareCache: boolean;
  sampling: { temperature?: number; maxTokens?: number; seed?: number };
}

const same = (a: number | undefined, b: number | undefined) => (a ?? null) === (b ?? null);

/** The earlier run that would answer every call of `planned` from the cache, if there is one. */
export function wholeCacheSource(planned: PlannedRun, runs: readonly RunSummary[]): RunSummary | null {
  if (!planned.useCache) return null;
  return (
    runs.find((r) => {
      const o = r.options;
      return (
        r.status === 'done' &&
        r.failedVignettes === 0 &&
        r.manifestPath === planned.manifestPath &&
        r.vignetteCount === planned.vignettes &&
        planned.models.every((m) => r.models.includes(m)) &&
        !o.skipPromptCache &&
        o.template === undefined &&
        o.privacy === planned.privacy &&
        // Shared across epochs, the key has no epoch and one answer serves them all; not shared, each epoch is its own key.
        o.shareCacheAcrossEpochs === planned.shareCache &&
        (planned.shareCache || r.epochs >= planned.epochs) &&
        o.sampling.topP === undefined &&
        o.sampling.stop === undefined &&
        same(o.sampling.temperature, planned.sampling.temperature) &&
        same(o.sampling.maxTokens, planned.sampling.maxTokens) &&
        same(o.sampling.seed, planned.sampling.seed)
      );
    }) ?? null
  );
}
