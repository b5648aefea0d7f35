/**
 * The judge layer's builder for the scorer registry: a `type: "judge"` definition becomes an LLM
 * judge over the engine's model router, once its judges are known to the catalog.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../../domain.js';
import type { Catalog } from '../../models/catalog.js';
import type { ModelClient } from '../../models/model-client.js';
import type { ScorerBuilder } from '../scorer-registry.js';
import { createLlmJudge } from './llm-judge.js';

/** `baselineRoots`: where a pairwise judge's baseline file must still be when it is read to score (see LlmJudgeOptions). */
export function judgeScorerBuilder(opts: { client: ModelClient; catalog: Catalog; baselineRoots?: readonly string[] | undefined }): ScorerBuilder {
  return (definition, version, where, bill) => {
    if (definition.type !== 'judge') throw new PanoptesError('invalid_input', `${where}: not a judge definition`, { where });
    definition.judges.forEach((judge, i) => {
      if (!opts.catalog.has(judge)) {
        throw new PanoptesError('invalid_input', `${where}.judges.${i}: "${judge}" is not in the catalog`, { where: `${where}.judges.${i}` });
      }
    });
    return { scorer: createLlmJudge({ definition, version, client: bill ? bill(opts.client) : opts.client, catalog: opts.catalog, baselineRoots: opts.baselineRoots }), layer: 'judge', definition };
  };
}
