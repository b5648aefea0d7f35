/**
 * Judge calls through the router on the mock (target: at least 2,000 calls/s, like the sweep
 * itself). One LLM-judge scorer with the two mock judges scores answers to distinct vignettes, 16
 * scores in flight, every call going through the real router (prompt cache on and missing, metrics
 * written behind to SQLite in a temp dir, pacing and budget checks) under the judge profile. A
 * first round warms up (JIT, the store's statements); `calls_per_sec` is the best of three rounds
 * after it, all of them listed.
 *   npm run bench -- judge
 * Runs on: Node.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog } from '../core/models/catalog.js';
import { Router } from '../core/models/router/router.js';
import { JudgeDefinitionSchema } from '../core/scoring/judge/judge-definition.js';
import { createLlmJudge, JUDGE_PROFILE } from '../core/scoring/judge/llm-judge.js';
import { examplesDir } from '../core/paths.js';
import { Store } from '../core/store/store.js';
import { initTelemetry, logger } from '../core/telemetry.js';
import { round } from './support.js';

const SCORES_PER_ROUND = 2_500;
const IN_FLIGHT = 16;
const ROUNDS = 3;

async function main(): Promise<void> {
  initTelemetry({ defaultLevel: 'warn' });
  const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-judge-'));
  const store = new Store(join(dir, 'panoptes.db'));
  const router = new Router({ catalog: Catalog.load(join(examplesDir(), 'catalog.json')), store: store.router, logger: logger(), env: {} });
  const judge = createLlmJudge({
    definition: JudgeDefinitionSchema.parse({ name: 'correct', type: 'judge', judges: ['mock-judge', 'mock-judge-2'], rubric: 'Is the answer correct?' }),
    version: 'bench',
    client: router,
  });
  const roundCalls = SCORES_PER_ROUND * judge.judges.length;
  const rates: number[] = [];
  try {
    for (let r = 0; r <= ROUNDS; r++) {
      let next = 0;
      let calls = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < SCORES_PER_ROUND) {
            const i = next++;
            const verdicts = await judge.score({
              runId: 'bench',
              model: 'mock-fast',
              epoch: 1,
              vignette: { id: `v${i}`, prompt: `Round ${r}, vignette ${i}: which option is right?`, target: 'ABCDE'[i % 5]! },
              response: 'ABCDE'[(i * 7) % 5]!,
              calls: { privacy: 'strict', skipPromptCache: false },
            });
            for (const v of verdicts) calls += v.judgeCall!.usage.calls - v.judgeCall!.usage.cachedCalls;
          }
        }),
      );
      const ms = performance.now() - t0;
      if (calls !== roundCalls) throw new Error(`round ${r}: ${calls} judge calls reached a host, expected ${roundCalls}`);
      if (r > 0) rates.push(calls / (ms / 1000));
    }
    const judged = router.metrics({ profile: JUDGE_PROFILE, since: 0 });
    const recorded = judged.providers.reduce((n, p) => n + p.calls, 0);
    if (recorded !== roundCalls * (ROUNDS + 1)) throw new Error(`metrics hold ${recorded} judge calls, expected ${roundCalls * (ROUNDS + 1)}`);
    console.log(
      JSON.stringify({
        judge_calls_per_round: roundCalls,
        in_flight_scores: IN_FLIGHT,
        calls_per_sec: round(Math.max(...rates), 0),
        all_calls_per_sec: rates.map((x) => round(x, 0)),
        judge_calls_in_metrics: recorded,
        target_calls_per_sec: 2000,
      }),
    );
  } finally {
    await router.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
