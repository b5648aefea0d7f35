/**
 * `panoptes import` from the real command line: promptfoo's getting-started config and an inspect
 * dataset of chat Samples imported, then run and scored by `panoptes run` as they are; a bad
 * source exits 2 with one line naming the place, and writes nothing.
 * Runs on: Node (tests).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = join(import.meta.dirname, '..', 'import', 'fixtures');
let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

describe('panoptes import', () => {
  it('imports promptfoo getting-started, prints the fidelity report, and the suite runs and scores as written', async () => {
    const out = join(tmp.dir, 'suite');
    const dataDir = join(tmp.dir, 'data');
    const imported = await runCli(['import', 'promptfoo', join(FIXTURES, 'getting-started/promptfooconfig.yaml'), '--out', out, '--data-dir', dataDir]);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain('wrote 4 vignettes to');
    expect(imported.stdout).toContain('wrote 1 scorer to');
    expect(imported.stdout).toMatch(/models: gpt-4\.1 \(openai:gpt-4\.1\)/);
    const run = await runCli(['run', '--manifest', join(out, 'manifest.jsonl'), '--scorers', join(out, 'scorers.json'), '--models', 'mock-fast', '--epochs', '1', '--data-dir', dataDir]);
    expect(run.stderr).not.toMatch(/panoptes: /);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('promptfoo-assert');
  }, 60_000);

  it('imports a promptfoo suite of two prompts, runs it on mocks, and the report compares the prompts as arms paired by test', async () => {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    const letters = Array.from({ length: 12 }, (_, i) => `'${'ABCD'[i % 4]}${i}'`).join(', ');
    writeFileSync(
      config,
      [
        'prompts:',
        "  - id: plain",
        "    raw: 'Say {{word}}.'",
        "  - id: shout",
        "    raw: 'SAY {{word}}!'",
        'tests:',
        `  - vars: { word: [${letters}] }`,
        '    assert:',
        "      - type: icontains",
        "        value: '{{word}}'",
        '',
      ].join('\n'),
    );
    const out = join(tmp.dir, 'suite');
    const dataDir = join(tmp.dir, 'data');
    const imported = await runCli(['import', 'promptfoo', config, '--out', out, '--data-dir', dataDir]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain('wrote 24 vignettes to');
    const run = await runCli(['run', '--manifest', join(out, 'manifest.jsonl'), '--scorers', join(out, 'scorers.json'), '--models', 'mock-fast,mock-strong', '--epochs', '2', '--data-dir', dataDir]);
    expect(run.code).toBe(0);
    const runId = /run (r[0-9a-z]+):/.exec(run.stderr)![1]!;
    const json = await runCli(['report', runId, '--json', '--data-dir', dataDir]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as { variants: string[]; models: { model: string; n: number }[]; pairs: { a: string; b: string; n: number }[] };
    expect(report.variants).toEqual(['plain', 'shout']);
    expect(report.models.map((m) => [m.model, m.n])).toEqual([
      ['mock-fast · plain', 12],
      ['mock-fast · shout', 12],
      ['mock-strong · plain', 12],
      ['mock-strong · shout', 12],
    ]);
    expect(report.pairs).toHaveLength(6);
    expect(report.pairs[0]).toMatchObject({ a: 'mock-fast · plain', b: 'mock-fast · shout', n: 12 });
    const text = await runCli(['report', runId, '--data-dir', dataDir]);
    expect(text.stdout).toContain('Prompt variants plain, shout: each row is an arm');
    expect(text.stdout).toContain('mock-fast · plain − mock-fast · shout');
  }, 90_000);

  it('imports an inspect dataset of chat Samples, which runs as chat vignettes', async () => {
    const path = join(tmp.dir, 'samples.jsonl');
    writeFileSync(path, `${JSON.stringify({ id: 'c1', input: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Pick one.' }], choices: ['x', 'y'], target: 'A' })}\n`);
    const out = join(tmp.dir, 'suite');
    const dataDir = join(tmp.dir, 'data');
    expect((await runCli(['import', 'inspect', path, '--out', out, '--data-dir', dataDir])).code).toBe(0);
    const run = await runCli(['run', '--manifest', join(out, 'manifest.jsonl'), '--scorers', join(out, 'scorers.json'), '--models', 'mock-fast', '--epochs', '1', '--data-dir', dataDir]);
    expect(run.code).toBe(0);
  }, 60_000);

  it('a bad source exits 2 with one line naming the place, and writes nothing', async () => {
    const path = join(tmp.dir, 'data.csv');
    writeFileSync(path, 'a,b\n1,2\n');
    const out = join(tmp.dir, 'suite');
    const res = await runCli(['import', 'csv', path, '--prompt', 'question', '--out', out, '--data-dir', join(tmp.dir, 'data')]);
    expect(res.code).toBe(2);
    expect(res.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^panoptes: .*data\.csv:2: no column "question"; the columns are "a", "b"$/)]);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});
