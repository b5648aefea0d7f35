/**
 * The promptfoo import against promptfoo itself: for each promptfoo fixture, the vignettes equal
 * the cases promptfoo 0.115.0 made of the same config (scripts/promptfoo-reference.mjs ran it with
 * its echo provider and wrote test/import/fixtures/promptfoo-reference.json): as many, and for each
 * (prompt index, test index) the same rendered prompt.
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readManifest } from '../../core/manifest.js';
import { runImport } from '../../core/import/run-import.js';
import { tempDir } from '../helpers/temp.js';
import { casesOf } from '../helpers/fixture-cases.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
interface Reference {
  promptfoo: string;
  configs: Record<string, { cases_per_provider: number; cases: { prompt_index: number; test_index: number; prompt: string }[] }>;
}
const reference = JSON.parse(readFileSync(join(FIXTURES, 'promptfoo-reference.json'), 'utf8')) as Reference;

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

describe(`the promptfoo import against promptfoo ${reference.promptfoo}`, () => {
  it.each(casesOf(Object.entries(reference.configs), 'promptfoo config'))('%s: the same cases, each prompt rendered as promptfoo renders it', async (name, want) => {
    const out = join(tmp.dir, 'suite');
    const summary = await runImport({ source: 'promptfoo', path: join(FIXTURES, name, 'promptfooconfig.yaml'), outDir: out, promptfoo: { matchModel: () => undefined, judge: 'mock-judge' }, table: {} });
    expect(summary.vignettes).toBe(want.cases_per_provider);
    const got: { prompt_index: number; test_index: number; prompt: string }[] = [];
    for await (const v of readManifest(join(out, 'manifest.jsonl'))) {
      got.push({ prompt_index: v.metadata!['prompt_index'] as number, test_index: v.metadata!['test_index'] as number, prompt: v.prompt });
    }
    got.sort((a, b) => a.prompt_index - b.prompt_index || a.test_index - b.test_index);
    expect(got).toEqual(want.cases.map(({ prompt_index, test_index, prompt }) => ({ prompt_index, test_index, prompt })));
  });
});
