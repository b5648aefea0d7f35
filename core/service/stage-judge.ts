/**
 * The judge loop of a staged template's last stage, as the local worker runs it: the stage's scorer
 * definitions built once by the engine's scorer registry (rules, code plugins, LLM judges alike), an
 * answer scored with each, and the hard fails' explanations handed back for the next round's prompt.
 * Runs on: Node (core).
 */
import type { IndexedVignette } from '../domain.js';
import type { ScorerRegistry } from '../scoring/scorer-registry.js';
import type { Scorer } from '../scoring/scorer.js';
import { ScoringConfigSchema } from '../scoring/scoring-config.js';
import type { StageJudge } from '../workers/staged-eval.js';

export function stageJudgeOf(registry: ScorerRegistry): StageJudge {
  const built = new Map<string, Scorer[]>();
  const scorersOf = (definitions: readonly unknown[]): Scorer[] => {
    const key = JSON.stringify(definitions);
    let scorers = built.get(key);
    if (!scorers) {
      scorers = registry.buildAll(ScoringConfigSchema.parse({ scorers: definitions })).map((b) => b.scorer);
      built.set(key, scorers);
    }
    return scorers;
  };
  return async (definitions, { vignette, response }: { vignette: IndexedVignette; response: string }) => {
    const failed: string[] = [];
    for (const scorer of scorersOf(definitions)) {
      const values = await scorer.score({
        runId: '',
        model: '',
        epoch: 1,
        vignette: {
          id: vignette.id,
          prompt: vignette.prompt,
          ...(vignette.system === undefined ? {} : { system: vignette.system }),
          ...(vignette.target === undefined ? {} : { target: vignette.target }),
          ...(vignette.metadata === undefined ? {} : { metadata: vignette.metadata }),
        },
        response,
        calls: { privacy: 'strict', skipPromptCache: true },
      });
      for (const v of values) if (v.severity === 'hard' && v.passed === false) failed.push(`${scorer.name}: ${v.explanation}`);
    }
    return { passed: failed.length === 0, failed };
  };
}
