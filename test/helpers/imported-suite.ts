/**
 * What the import tests read of a suite `panoptes import` wrote: its vignettes, and its scorers
 * built as the engine builds them (code plugins in the real sandbox; judges left out, they call a
 * model), each scoring one answer to one vignette.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { readScoringFile } from '../../core/cli/scoring-file.js';
import type { IndexedVignette } from '../../core/domain.js';
import { catalogModelFor } from '../../core/import/provider-match.js';
import type { ImportRequest } from '../../core/import/run-import.js';
import { readManifest } from '../../core/manifest.js';
import { checkCodeDefinition, codeScorerBuilder } from '../../core/scoring/plugin/code-scorer.js';
import { ScorerRegistry } from '../../core/scoring/scorer-registry.js';
import type { Scorer } from '../../core/scoring/scorer.js';
import { loadCatalog } from '../../core/service/load-catalog.js';

/** A promptfoo import of `config` into `out`, judged by `mock-judge`, models matched in the embedded catalog. */
export function promptfooRequest(config: string, out: string, dataDir: string): ImportRequest {
  const catalog = loadCatalog(dataDir);
  return { source: 'promptfoo', path: config, outDir: out, promptfoo: { matchModel: (id) => catalogModelFor(catalog, id), judge: 'mock-judge' }, table: {} };
}

export async function manifestOf(dir: string): Promise<IndexedVignette[]> {
  const out: IndexedVignette[] = [];
  for await (const v of readManifest(join(dir, 'manifest.jsonl'))) out.push(v);
  return out;
}

const registry = new ScorerRegistry();
registry.register('code', codeScorerBuilder({ network: false }), checkCodeDefinition({ network: false }));
const opened: Scorer[] = [];

/** Closes every scorer `scorersOf` built (their sandboxes): a test file's afterAll. */
export async function closeScorers(): Promise<void> {
  await Promise.all(opened.splice(0).map((s) => s.close?.()));
}

/** The suite's scorers by name, but its judges. */
export async function scorersOf(dir: string): Promise<Map<string, Scorer>> {
  const config = await readScoringFile(join(dir, 'scorers.json'));
  await registry.check({ scorers: config.scorers.filter((s) => s.type !== 'judge') });
  const built = new Map<string, Scorer>();
  for (const [i, def] of config.scorers.entries()) {
    if (def.type === 'judge') continue;
    const scorer = registry.build(def, `scorers.${i}`).scorer;
    opened.push(scorer);
    built.set(def.name, scorer);
  }
  return built;
}

export async function verdict(scorer: Scorer, vignette: IndexedVignette, response: string) {
  const [v] = await scorer.score({ runId: 'r', model: 'm', epoch: 1, vignette, response, calls: { privacy: 'strict', skipPromptCache: false } });
  return v!;
}
