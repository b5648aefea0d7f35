/**
 * `panoptes import csv|jsonl|parquet`: a table's column (or a template over its columns) as the
 * prompt, with target, id, system and metadata columns; a parquet file written in the test with
 * several row groups (read one group at a time); bad columns, templates and rows named with their
 * file and row, and nothing written.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetMetadata } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runImport, type ImportRequest, type ImportSource } from '../../core/import/run-import.js';
import type { TableImportOptions } from '../../core/import/table-import.js';
import { checkManifest } from '../../core/manifest.js';
import { tempDir } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

function request(source: ImportSource, path: string, table: TableImportOptions): ImportRequest {
  return { source, path, outDir: join(tmp.dir, 'out'), promptfoo: { matchModel: () => undefined, judge: 'mock-judge' }, table };
}

function lines(): Array<Record<string, unknown>> {
  return readFileSync(join(tmp.dir, 'out', 'manifest.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('csv and jsonl', () => {
  it('a CSV with --prompt, --target, --id: the other columns become metadata, and a match scorer is written', async () => {
    const path = join(tmp.dir, 'qa.csv');
    writeFileSync(path, 'qid,question,answer,topic\nq1,"What is 2+2, exactly?",4,math\nq2,Capital of France?,Paris,geo\n');
    const s = await runImport(request('csv', path, { prompt: 'question', target: 'answer', id: 'qid' }));
    expect(s.vignettes).toBe(2);
    expect(lines()).toEqual([
      { id: 'q1', prompt: 'What is 2+2, exactly?', target: '4', metadata: { topic: 'math' } },
      { id: 'q2', prompt: 'Capital of France?', target: 'Paris', metadata: { topic: 'geo' } },
    ]);
    expect(JSON.parse(readFileSync(join(tmp.dir, 'out', 'scorers.json'), 'utf8'))).toEqual({ scorers: [{ name: 'match', type: 'match' }] });
    expect((await checkManifest(join(tmp.dir, 'out', 'manifest.jsonl'))).issues).toEqual([]);
  });

  it('a JSONL with --template over its columns, ids by row number, chosen metadata', async () => {
    const path = join(tmp.dir, 'rows.jsonl');
    writeFileSync(path, `${JSON.stringify({ q: 'Sky colour?', opts: { a: 'blue' }, lang: 'en', junk: 1 })}\n\n${JSON.stringify({ q: 'Grass colour?', opts: { a: 'green' }, lang: 'en', junk: 2 })}\n`);
    await runImport(request('jsonl', path, { template: 'Q: {{ q }} (hint: {{opts.a}})', metadata: ['lang'] }));
    expect(lines()).toEqual([
      { id: '1', prompt: 'Q: Sky colour? (hint: blue)', metadata: { lang: 'en' } },
      { id: '2', prompt: 'Q: Grass colour? (hint: green)', metadata: { lang: 'en' } },
    ]);
    expect(existsSync(join(tmp.dir, 'out', 'scorers.json'))).toBe(false);
  });

  it.each([
    ['a column that does not exist', 'csv', 'a,b\n1,2\n', { prompt: 'question' }, /data\.csv:2: no column "question"; the columns are "a", "b"/],
    ['a template naming an unknown var', 'csv', 'a,b\n1,2\n', { template: '{{a}} {{c}}' }, /data\.csv:2: no column "c"/],
    ['a row the template cannot fill', 'jsonl', '{"a":"x"}\n{"b":"y"}\n', { template: 'say {{a}}' }, /data\.jsonl:2: the template names the unknown var "a"/],
    ['a malformed JSONL row', 'jsonl', '{"a":"x"}\n{"a": \n', { prompt: 'a' }, /data\.jsonl:2: invalid JSON/],
    ['a duplicate id', 'csv', 'id,a\n1,x\n1,y\n', { prompt: 'a', id: 'id' }, /data\.csv:3: duplicate id "1" \(first at .*data\.csv:2\)/],
    ['an empty prompt', 'csv', 'a\nx\n""\n', { prompt: 'a' }, /data\.csv:3: the prompt is empty/],
    ['an empty file', 'csv', '', { prompt: 'a' }, /data\.csv: holds no items to import/],
    ['a header and no row', 'csv', 'a,b\n', { prompt: 'a' }, /data\.csv: holds no items to import/],
    ['a later row without its id', 'jsonl', '{"id":"x","a":"p"}\n{"a":"q"}\n', { prompt: 'a', id: 'id' }, /data\.jsonl:2: no id in column "id"/],
    ['both --prompt and --template', 'csv', 'a\nx\n', { prompt: 'a', template: '{{a}}' }, /exactly one of --prompt COLUMN or --template TEXT/],
  ] as const)('%s is refused naming the file and row, and nothing is written', async (_what, kind, text, opts, message) => {
    const path = join(tmp.dir, `data.${kind}`);
    writeFileSync(path, text);
    await expect(runImport(request(kind, path, opts))).rejects.toThrow(message);
    expect(existsSync(join(tmp.dir, 'out'))).toBe(false);
  });

  it('rows of a JSONL table without a target are said, as the match scorer fails them', async () => {
    const path = join(tmp.dir, 'data.jsonl');
    writeFileSync(path, '{"q":"Sky?","a":"blue"}\n{"q":"Grass?"}\n{"q":"Sun?","a":""}\n');
    const s = await runImport(request('jsonl', path, { prompt: 'q', target: 'a' }));
    expect(lines().map((l) => l.target)).toEqual(['blue', undefined, undefined]);
    expect(s.notes).toEqual([{ what: 'rows without a target (2)', why: expect.stringMatching(/no value in column "a"/) }]);
  });

  it('a missing file is refused naming it', async () => {
    await expect(runImport(request('csv', join(tmp.dir, 'nope.csv'), { prompt: 'a' }))).rejects.toThrow(/cannot read .*nope\.csv: ENOENT/);
  });
});

describe('parquet', () => {
  it('reads a file of several row groups, with integer, float and boolean columns, in order', async () => {
    const n = 2500;
    const buffer = parquetWriteBuffer({
      columnData: [
        { name: 'id', data: Array.from({ length: n }, (_, i) => `row-${i}`), type: 'STRING' },
        { name: 'question', data: Array.from({ length: n }, (_, i) => `What is ${i} + 1?`), type: 'STRING' },
        { name: 'answer', data: Array.from({ length: n }, (_, i) => BigInt(i + 1)), type: 'INT64' },
        { name: 'difficulty', data: Array.from({ length: n }, (_, i) => (i % 10) / 10), type: 'DOUBLE' },
        { name: 'hard', data: Array.from({ length: n }, (_, i) => i % 3 === 0), type: 'BOOLEAN' },
      ],
      rowGroupSize: 1000,
    });
    const path = join(tmp.dir, 'train.parquet');
    writeFileSync(path, Buffer.from(buffer));
    expect(parquetMetadata(buffer).row_groups.length).toBe(3);
    const s = await runImport(request('parquet', path, { prompt: 'question', target: 'answer', id: 'id' }));
    expect(s.vignettes).toBe(n);
    const rows = lines();
    expect(rows[0]).toEqual({ id: 'row-0', prompt: 'What is 0 + 1?', target: '1', metadata: { difficulty: 0, hard: true } });
    expect(rows[2499]).toEqual({ id: 'row-2499', prompt: 'What is 2499 + 1?', target: '2500', metadata: { difficulty: 0.9, hard: true } });
    expect(new Set(rows.map((r) => r.id)).size).toBe(n);
  });

  it('a file that is not parquet is refused naming it', async () => {
    const path = join(tmp.dir, 'fake.parquet');
    writeFileSync(path, 'id,question\n1,x\n');
    await expect(runImport(request('parquet', path, { prompt: 'question' }))).rejects.toThrow(/fake\.parquet: not a parquet file/);
  });
});
