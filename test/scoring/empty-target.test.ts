/**
 * An empty target, refused when scorers that read it are attached (with a new run, or to a stored
 * one), naming the vignette's line in the manifest, and nothing stored; scorers that do not read
 * the target, or `includes` with its own values, are attached as usual.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempEngines } from '../helpers/temp-engine.js';

const tmp = useTempEngines();

/** Line 1 a vignette, line 2 blank, line 3 a vignette with an empty target: its line is not its position. */
function manifest(): string {
  const path = join(tmp.dir, 'empty-target.jsonl');
  const lines = [
    JSON.stringify({ id: 'q1', prompt: 'Capital of France?', target: 'Paris' }),
    '',
    JSON.stringify({ id: 'q2', prompt: 'Capital of Spain?', target: '  ' }),
  ];
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('an empty target', () => {
  it('refuses a run created with a rule that reads targets, naming the line, and stores no run', async () => {
    const e = tmp.open({ tickMs: 20 });
    const path = manifest();
    await expect(
      e.service.createRun({ manifestPath: path, models: ['mock-strong'], epochs: 1, scorers: { scorers: [{ name: 'has-it', type: 'includes' }] } }),
    ).rejects.toMatchObject({
      code: 'invalid_input',
      where: `${path}:3`,
      message: expect.stringContaining(`${path}:3: vignette "q2" has an empty "target", and scorers.0 ("has-it", includes) compares answers with it`),
    });
    expect(await e.service.listRuns()).toEqual([]);
  });

  it('refuses scoring a stored run with match or choice, and attaches scorers that do not read the target', async () => {
    const e = tmp.open({ tickMs: 20 });
    const path = manifest();
    const run = await e.service.createRun({ manifestPath: path, models: ['mock-strong'], epochs: 1 });
    for (const type of ['match', 'choice'] as const) {
      await expect(e.service.scoreRun({ runId: run.id, scorers: { scorers: [{ name: 'words', type: 'words', max: 9 }, { name: 'x', type }] } })).rejects.toMatchObject({
        where: `${path}:3`,
        message: expect.stringContaining(`scorers.1 ("x", ${type})`),
      });
    }
    expect((await e.service.scoringStatus({ runId: run.id })).scorers).toEqual([]);
    const status = await e.service.scoreRun({
      runId: run.id,
      scorers: { scorers: [{ name: 'words', type: 'words', max: 9 }, { name: 'paris', type: 'includes', values: ['Paris'] }] },
    });
    expect(status.scorers.map((s) => s.name)).toEqual(['words', 'paris']);
  });
});
