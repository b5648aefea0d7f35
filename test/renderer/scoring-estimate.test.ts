/**
 * The estimate before Create with scorers, against a case worked by hand: the judges' calls at the
 * judge's own catalog price, apart from the sweep's and in the total, and the most retries of hard
 * fails could add.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import type { CatalogModelEntry } from '../../core/service/contract.js';
import { estimateRun } from '../../renderer/src/state/run-estimate.js';
import { estimateScoring } from '../../renderer/src/state/scoring-estimate.js';

const entry = (id: string, inputPerMTok: number, outputPerMTok: number): CatalogModelEntry => ({
  id,
  label: id,
  hosts: [],
  inputPerMTok,
  outputPerMTok,
  privacySafe: true,
  available: true,
});

describe('the estimate with scoring', () => {
  it('adds the judges at their own price and bounds the retries, as worked by hand', () => {
    const candidate = entry('cand', 2, 10);
    const judge = entry('judge', 0.5, 1.5);
    // 100 vignettes of 392 characters (98 tokens + 8 of template = 106 a call), 2 epochs, max tokens 50:
    // sweep in 100 x 2 x 106 = 21,200 at $2/M = $0.0424; out 100 x 2 x 50 = 10,000 at $10/M = $0.10; $0.1424.
    const sweep = estimateRun({ vignettes: 100, promptChars: 39_200, epochs: 2, models: [candidate], history: [], maxTokens: 50 });
    expect(sweep.costUsd).toBeCloseTo(0.1424, 12);
    const scoring = estimateScoring({
      config: {
        scorers: [
          // A rubric of 40 characters: 10 tokens.
          { name: 'judged', type: 'judge', judges: ['judge'], rubric: 'Is the answer right? Answer pass or fail' },
          { name: 'exact', type: 'match', retryOnHardFail: 2 },
        ],
      },
      sweep,
      vignettes: 100,
      epochs: 2,
      catalog: new Map([
        ['cand', candidate],
        ['judge', judge],
      ]),
      history: [],
    });
    // Judge: 200 calls, each 98 (prompt) + 50 (answer) + 10 (rubric) + 64 (template) = 222 in: 44,400 at $0.50/M = $0.0222;
    // 64 out (assumed) each: 12,800 at $1.50/M = $0.0192; $0.0414.
    expect(scoring.judges).toEqual([{ judge: 'judge', calls: 200, inputTokens: 44_400, outputTokens: 12_800, costUsd: expect.any(Number) }]);
    expect(scoring.judgeCostUsd).toBeCloseTo(0.0414, 12);
    // $0.1424 + $0.0414 = $0.1838; retries: at most 2 x the sweep = $0.2848.
    expect(scoring.totalUsd).toBeCloseTo(0.1838, 12);
    expect(scoring.retryUpToUsd).toBeCloseTo(0.2848, 12);
  });
});
