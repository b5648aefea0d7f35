/**
 * Pairwise judges against a baseline file: a run of mock-strong judged against mock-weak's answers
 * from an earlier run's responses.jsonl (the epoch's line wins) wins more than it loses; a file of
 * `{"id", "response"}` lines missing a vignette makes that vignette's records "could not score"
 * saying so; the file is given relative to the scoring file, and pinned by its hash, so an edited
 * file is a new scorer version, and a file edited under an attached scorer is not compared with; every line is validated, and a bad one is refused naming
 * file:line and the field, as is a file over the in-memory bound, before anything is stored.
 */
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readScoringFile } from '../../../core/cli/scoring-file.js';
import { responsesPath } from '../../../core/paths.js';
import { MAX_BASELINE_FILE_BYTES, readBaselineFile } from '../../../core/scoring/judge/baseline-file.js';
import { writeTargetManifest } from '../../helpers/temp.js';
import { useTempEngines } from '../../helpers/temp-engine.js';

const tmp = useTempEngines();

const JUDGE = { name: 'vs-file', type: 'judge', mode: 'pairwise', judges: ['mock-judge'], rubric: 'Which answer is the right option?' };

/** A scoring file next to the baseline file, naming it relatively. */
function writeScoringFile(baselineFile: string): string {
  const path = join(tmp.dir, 'scoring.json');
  writeFileSync(path, JSON.stringify({ scorers: [{ ...JUDGE, baselineFile }] }));
  return path;
}

const lines = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

describe('baseline file lines', () => {
  it('reads both shapes: the epoch-matching line of a responses.jsonl wins, else the vignette first line', async () => {
    const path = join(tmp.dir, 'b.jsonl');
    writeFileSync(path, lines([{ id: 'a', response: 'A1' }, { vignette_id: 'b', epoch: 2, response: 'B2', model: 'm' }, { vignette_id: 'b', epoch: 1, response: 'B1' }, { id: 7, response: 'seven' }]));
    const answers = await readBaselineFile(path, 'baselineFile');
    expect([answers.answer('a', 3), answers.answer('b', 1), answers.answer('b', 2), answers.answer('b', 5), answers.answer('7', 1), answers.answer('c', 1)]).toEqual([
      'A1',
      'B1',
      'B2',
      'B2',
      'seven',
      undefined,
    ]);
    expect(answers.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('names file:line and the field of a bad line, and refuses a file over the bound', async () => {
    const path = join(tmp.dir, 'bad.jsonl');
    const refused = async (text: string | Buffer) => {
      writeFileSync(path, text);
      return readBaselineFile(path, 'scorers.0.baselineFile').then(
        () => undefined,
        (err: { where: string; message: string }) => [err.where, err.message.slice(err.where.length + 2)],
      );
    };
    expect(await refused(lines([{ id: 'a', response: 'x' }]) + '{"id": "b", "response": 3}\n')).toEqual([`${path}:2`, 'response: must be a string']);
    expect(await refused('\n{"id": "a", "response": "x"}\n{oops\n')).toEqual([`${path}:3`, expect.stringMatching(/^invalid JSON/)]);
    expect(await refused(lines([{ response: 'x' }]))).toEqual([`${path}:1`, expect.stringMatching(/^id: /)]);
    expect(await refused(lines([{ vignette_id: 'a', epoch: 0, response: 'x' }]))).toEqual([`${path}:1`, expect.stringMatching(/^epoch: /)]);
    expect(await refused(lines([{ id: 'a', response: 'x' }, { id: 'a', response: 'y' }]))).toEqual([`${path}:2`, expect.stringMatching(/^id: vignette "a" already has an answer/)]);
    expect(await refused('\n')).toEqual(['scorers.0.baselineFile', expect.stringMatching(/holds no answers/)]);
    await expect(readBaselineFile(join(tmp.dir, 'none.jsonl'), 'scorers.0.baselineFile')).rejects.toMatchObject({
      where: 'scorers.0.baselineFile',
      message: expect.stringMatching(/cannot read the baseline file ".*none\.jsonl" \(ENOENT\)/),
    });
    // The manifest's input rules, each naming file:line.
    expect(await refused(Buffer.concat([Buffer.from('{"id": "a", "response": "x"}\n{"id": "b", "response": "'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]))).toEqual([
      `${path}:2`,
      expect.stringMatching(/^not valid UTF-8 \(first bad byte at byte 26 of the line\)/),
    ]);
    expect(await refused('{"id": "a", "response": "\\ud83d alone"}\n')).toEqual([`${path}:1`, expect.stringMatching(/"response" holds a lone UTF-16 surrogate/)]);
    expect(await refused(`{"id": "a", "response": "x", "deep": ${'['.repeat(200_000)}${']'.repeat(200_000)}}\n`)).toEqual([`${path}:1`, expect.stringMatching(/nests deeper than 64 levels/)]);
    // A byte order mark and CRLF line ends are taken, as in a manifest.
    writeFileSync(path, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"id": "a", "response": "x"}\r\n{"id": "b", "response": "y"}\r\n')]));
    const bom = await readBaselineFile(path, 'scorers.0.baselineFile');
    expect([bom.answer('a', 1), bom.answer('b', 1)]).toEqual(['x', 'y']);
    // A sparse file: refused by its size, before a byte is read.
    truncateSync(path, MAX_BASELINE_FILE_BYTES + 1);
    await expect(readBaselineFile(path, 'scorers.0.baselineFile')).rejects.toMatchObject({ where: 'scorers.0.baselineFile', message: expect.stringMatching(/64 MiB/) });
  });
});

describe('pairwise judges against a baseline file', () => {
  it("judges a run against an earlier run's responses.jsonl", async () => {
    const dataDir = join(tmp.dir, 'data');
    const e = (tmp.open({ dataDir, tickMs: 20 }));
    e.scoring.start();
    const manifestPath = writeTargetManifest(tmp.dir, 50);
    const earlier = await e.service.createRun({ manifestPath, models: ['mock-weak'], epochs: 2 });
    expect(await e.scheduler.runToCompletion(earlier.id)).toMatchObject({ status: 'done' });
    writeFileSync(join(tmp.dir, 'last-month.jsonl'), readFileSync(responsesPath(dataDir, earlier.id)));

    const run = await e.service.createRun({ manifestPath, models: ['mock-strong'], epochs: 2, scorers: await readScoringFile(writeScoringFile('last-month.jsonl')) });
    expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
    await e.scoring.finish(run.id);
    const [s] = (await e.service.scoringStatus({ runId: run.id })).scorers;
    expect(s).toMatchObject({ done: 100, failed: 0, pending: 0 });
    const report = await e.service.report({ runId: run.id, scorer: 'vs-file' });
    expect(report.models[0]!.mean).toBeGreaterThan(0.5);
    expect(report.pairwise).toEqual({ baseline: `file ${join(tmp.dir, 'last-month.jsonl')}` });
  });

  it('stores a vignette missing from the file as could not score, and makes an edited file a new version', async () => {
    const e = (tmp.open({ tickMs: 20 }));
    e.scoring.start();
    const run = await e.service.createRun({ manifestPath: writeTargetManifest(tmp.dir, 5), models: ['mock-strong'], epochs: 2 });
    await e.scheduler.runToCompletion(run.id);
    const baseline = join(tmp.dir, 'answers.jsonl');
    writeFileSync(baseline, lines(['q0', 'q1', 'q2', 'q4'].map((id) => ({ id, response: 'Z' }))));
    const scoring = writeScoringFile('answers.jsonl');
    await e.service.scoreRun({ runId: run.id, scorers: await readScoringFile(scoring) });
    await e.scoring.finish(run.id);
    const [first] = (await e.service.scoringStatus({ runId: run.id })).scorers;
    expect(first).toMatchObject({ done: 8, failed: 2 });
    const failures = e.store.db.prepare(`SELECT explanation FROM scores WHERE failed = 1`).pluck().all();
    expect(failures).toEqual(Array(2).fill(`could not score: no baseline answer for vignette q3 in "${baseline}"`));

    writeFileSync(baseline, lines(['q0', 'q1', 'q2', 'q3', 'q4'].map((id) => ({ id, response: 'Z' }))));
    await e.service.scoreRun({ runId: run.id, scorers: await readScoringFile(scoring) });
    await e.scoring.finish(run.id);
    const both = (await e.service.scoringStatus({ runId: run.id })).scorers;
    expect(both).toHaveLength(2);
    expect(both[1]!.version).not.toBe(both[0]!.version);
    expect(both[1]).toMatchObject({ done: 10, failed: 0 });
  });

  it('does not compare with a file edited after its scorer was attached: its records cannot be scored, saying so', async () => {
    const e = (tmp.open({ tickMs: 20 }));
    const run = await e.service.createRun({ manifestPath: writeTargetManifest(tmp.dir, 3), models: ['mock-strong'], epochs: 1 });
    await e.scheduler.runToCompletion(run.id);
    const baseline = join(tmp.dir, 'answers.jsonl');
    writeFileSync(baseline, lines(['q0', 'q1', 'q2'].map((id) => ({ id, response: 'Z' }))));
    // Attached, then the file changes under it before the worker reads it (its first pass reads
    // records, then gives the event loop a turn before any scorer runs).
    await e.service.scoreRun({ runId: run.id, scorers: await readScoringFile(writeScoringFile('answers.jsonl')) });
    writeFileSync(baseline, lines(['q0', 'q1', 'q2'].map((id) => ({ id, response: 'A' }))));
    e.scoring.start();
    await e.scoring.finish(run.id);
    expect((await e.service.scoringStatus({ runId: run.id })).scorers[0]).toMatchObject({ done: 0, failed: 3 });
    const failures = e.store.db.prepare(`SELECT explanation FROM scores WHERE failed = 1`).pluck().all() as string[];
    for (const x of failures) expect(x).toMatch(/^could not score: the baseline file ".*answers\.jsonl" no longer has the content this scorer version was made with/);
  });

  it('refuses a bad line at scoring time, naming file:line, and stores nothing', async () => {
    const e = (tmp.open({ tickMs: 20 }));
    const run = await e.service.createRun({ manifestPath: writeTargetManifest(tmp.dir, 3), models: ['mock-strong'], epochs: 1 });
    await e.scheduler.runToCompletion(run.id);
    const baseline = join(tmp.dir, 'answers.jsonl');
    writeFileSync(baseline, '{"id": "q0", "response": "A"}\n{"id": "q1"}\n');
    await expect(e.service.scoreRun({ runId: run.id, scorers: await readScoringFile(writeScoringFile('answers.jsonl')) })).rejects.toMatchObject({
      code: 'invalid_input',
      where: `${baseline}:2`,
      message: expect.stringMatching(/:2: response: /),
    });
    expect((await e.service.scoringStatus({ runId: run.id })).scorers).toEqual([]);
  });
});
