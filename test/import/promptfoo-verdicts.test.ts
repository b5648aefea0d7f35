/**
 * The promptfoo import's scorers against promptfoo's own verdicts: promptfoo 0.115.0 graded each
 * test of test/import/fixtures/assertion-outcomes on an answer the fixture chose (its provider
 * answers with the test's `answer` var); scripts/promptfoo-reference.mjs kept each assertion's
 * pass and score in test/import/fixtures/promptfoo-reference.json. The import's scorers, built as
 * the engine builds them (rules, and code plugins in the real sandbox), score the same answers:
 * each shared assertion (a scorer of its own, named by its metric) passes exactly where
 * promptfoo's did, and each test's own assertions, checked together, pass when all of
 * promptfoo's did, with promptfoo's weighted mean of their scores as the value.
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IndexedVignette } from '../../core/domain.js';
import { runImport } from '../../core/import/run-import.js';
import type { Scorer } from '../../core/scoring/scorer.js';
import { casesOf } from '../helpers/fixture-cases.js';
import { closeScorers, manifestOf, promptfooRequest, scorersOf, verdict } from '../helpers/imported-suite.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');

interface GradedCase {
  prompt_index: number;
  test_index: number;
  answer: string;
  verdicts: { type: string; value: unknown; metric: string | null; weight: number; pass: boolean; score: number }[];
}
const reference = JSON.parse(readFileSync(join(FIXTURES, 'promptfoo-reference.json'), 'utf8')) as {
  promptfoo: string;
  configs: Record<string, { cases: GradedCase[] }>;
};
const graded = reference.configs['assertion-outcomes']!.cases;

let tmp: ReturnType<typeof tempDir>;
let vignettes: IndexedVignette[];
let scorers: Map<string, Scorer>;
beforeAll(async () => {
  tmp = tempDir();
  const out = join(tmp.dir, 'suite');
  await runImport(promptfooRequest(join(FIXTURES, 'assertion-outcomes', 'promptfooconfig.yaml'), out, tmp.dir));
  vignettes = await manifestOf(out);
  scorers = await scorersOf(out);
});
afterAll(async () => {
  await closeScorers();
  tmp.cleanup();
});

function vignetteOf(c: GradedCase): IndexedVignette {
  const v = vignettes.find((x) => x.metadata?.prompt_index === c.prompt_index && x.metadata.test_index === c.test_index);
  if (!v) throw new Error(`no vignette for prompt ${c.prompt_index}, test ${c.test_index}`);
  return v;
}

const shared = graded.flatMap((c) => c.verdicts.filter((v) => v.metric !== null).map((v) => ({ c, v })));
const label = ({ c, v }: (typeof shared)[number]) => `test ${c.test_index + 1} (${JSON.stringify(c.answer)}): ${v.metric} ${v.pass ? 'passes' : 'fails'}`;

describe(`the promptfoo import's verdicts against promptfoo ${reference.promptfoo}`, () => {
  it('the reference grades every shared assertion both ways', () => {
    expect(graded.length).toBe(9);
    const metrics = new Set(shared.map(({ v }) => v.metric));
    expect(metrics.size).toBe(19);
    for (const m of metrics) expect(new Set(shared.filter(({ v }) => v.metric === m).map(({ v }) => v.pass)), m!).toEqual(new Set([true, false]));
  });

  it.each(casesOf(shared.map((x) => [label(x), x] as const), 'graded shared assertion'))('%s', async (_label, { c, v }) => {
    const scorer = scorers.get(v.metric!);
    expect(scorer, `a scorer named ${v.metric}`).toBeDefined();
    const got = await verdict(scorer!, vignetteOf(c), c.answer);
    expect(got.passed).toBe(v.pass);
    expect(got.value).toBe(v.score);
  });

  it.each(casesOf(graded.map((c) => [`test ${c.test_index + 1} (${JSON.stringify(c.answer)})`, c] as const), 'graded test'))(
    "%s: its own assertions, checked together, as promptfoo checked them",
    async (_label, c) => {
      const own = c.verdicts.filter((v) => v.metric === null);
      expect(own.length).toBeGreaterThan(0);
      const got = await verdict(scorers.get('promptfoo-assert')!, vignetteOf(c), c.answer);
      expect(got.passed).toBe(own.every((v) => v.pass));
      const weights = own.reduce((n, v) => n + v.weight, 0);
      expect(got.value).toBeCloseTo(own.reduce((n, v) => n + v.score * v.weight, 0) / weights, 12);
    },
  );
});
