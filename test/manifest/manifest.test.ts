import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PanoptesError } from '../../core/domain.js';
import { checkManifest, readManifest } from '../../core/manifest.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { initTelemetry } from '../../core/telemetry.js';
import { tempDir } from '../helpers/temp.js';

initTelemetry({ defaultLevel: 'silent' });

describe('manifests', () => {
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  beforeEach(() => {
    tmp = tempDir();
    engine = openEngine({ dataDir: join(tmp.dir, 'data') });
  });
  afterEach(async () => {
    await engine.close();
    tmp.cleanup();
  });

  const write = (name: string, text: string) => {
    const p = join(tmp.dir, name);
    writeFileSync(p, text);
    return p;
  };

  /** createRun must fail naming the place, and leave no run, job or vignette behind. */
  async function expectRejected(path: string, pattern: RegExp) {
    const err = await engine.service.createRun({ manifestPath: path, models: ['mock-fast'], epochs: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PanoptesError);
    expect((err as PanoptesError).message).toMatch(pattern);
    expect(engine.store.queries.listRuns()).toEqual([]);
    const counts = engine.store.db
      .prepare('SELECT (SELECT COUNT(*) FROM runs) r, (SELECT COUNT(*) FROM jobs) j, (SELECT COUNT(*) FROM vignettes) v, (SELECT COUNT(*) FROM staged_runs) s')
      .get();
    expect(counts).toEqual({ r: 0, j: 0, v: 0, s: 0 });
    return err as PanoptesError;
  }

  it('reads vignettes in order, ignoring blank lines and keeping unknown fields as metadata', async () => {
    const p = write('ok.jsonl', '{"id":"a","prompt":"A?"}\n\n   \n{"id":2,"prompt":"B?","system":"S","target":4,"lang":"en"}\r\n');
    const got = [];
    for await (const v of readManifest(p)) got.push(v);
    expect(got).toEqual([
      { index: 0, id: 'a', prompt: 'A?' },
      { index: 1, id: '2', prompt: 'B?', system: 'S', target: '4', metadata: { lang: 'en' } },
    ]);
    const check = await checkManifest(p);
    expect(check).toMatchObject({ count: 2, issues: [] });
  });

  it('checks and copies a manifest in one read: vignettes are handed on until the first issue, and a late issue leaves nothing', async () => {
    const good = Array.from({ length: 2500 }, (_, i) => JSON.stringify({ id: `v${i}`, prompt: `Q${i}?` })).join('\n');
    const handed: Array<{ index: number; id: string }> = [];
    const clean = await checkManifest(write('clean.jsonl', `${good}\n`), { onVignette: (v) => void handed.push({ index: v.index, id: v.id }) });
    expect(clean.count).toBe(2500);
    expect(handed).toHaveLength(2500);
    expect(handed.every((v, i) => v.index === i && v.id === `v${i}`)).toBe(true);

    handed.length = 0;
    const late = write('late.jsonl', `${good}\n{"id":"v1","prompt":"again"}\n{"id":"x","prompt":"after"}\n`);
    const check = await checkManifest(late, { onVignette: (v) => void handed.push({ index: v.index, id: v.id }) });
    expect(check.issues).toEqual([{ line: 2501, message: 'duplicate id "v1" (first on line 2)' }]);
    // Nothing after the first issue is handed on: the caller is about to discard what it took.
    expect(handed).toHaveLength(2500);
    // createRun staged the first 2,500 in batches, then discarded them all.
    await expectRejected(late, /late\.jsonl:2501: duplicate id "v1"/);
  });

  it('rejects invalid JSON with its line number', async () => {
    const p = write('bad.jsonl', '{"id":"a","prompt":"x"}\n{"id":"b", "prompt": \n');
    const err = await expectRejected(p, /bad\.jsonl:2: invalid JSON/);
    expect(err.where).toBe(`${p}:2`);
  });

  it('rejects a missing or empty id or prompt with its line number', async () => {
    await expectRejected(write('noid.jsonl', '{"prompt":"x"}\n'), /noid\.jsonl:1: missing "id"/);
    await expectRejected(write('emptyid.jsonl', '{"id":"a","prompt":"x"}\n\n{"id":"  ","prompt":"x"}\n'), /emptyid\.jsonl:3: "id" must not be empty/);
    await expectRejected(write('noprompt.jsonl', '{"id":"a"}\n'), /noprompt\.jsonl:1: missing "prompt"/);
    await expectRejected(write('emptyprompt.jsonl', '{"id":"a","prompt":""}\n'), /emptyprompt\.jsonl:1: "prompt" must not be empty/);
    await expectRejected(write('array.jsonl', '["a","b"]\n'), /array\.jsonl:1: expected a JSON object/);
  });

  it('rejects a duplicate id naming both lines', async () => {
    const p = write('dup.jsonl', '{"id":"a","prompt":"x"}\n{"id":"b","prompt":"y"}\n\n{"id":"a","prompt":"z"}\n');
    await expectRejected(p, /dup\.jsonl:4: duplicate id "a" \(first on line 1\)/);
  });

  it('rejects an empty manifest and an unreadable file', async () => {
    await expectRejected(write('empty.jsonl', '\n\n  \n'), /holds no vignettes/);
    await expectRejected(join(tmp.dir, 'missing.jsonl'), /cannot read manifest .*missing\.jsonl/);
    await expectRejected(tmp.dir, /cannot read manifest/);
    if (process.getuid?.() !== 0) {
      const locked = write('locked.jsonl', '{"id":"a","prompt":"x"}\n');
      chmodSync(locked, 0o000);
      await expectRejected(locked, /cannot read manifest/);
    }
  });

  it('collects many issues for a form, each with its line', async () => {
    const p = write('many.jsonl', ['{"id":"a","prompt":"x"}', 'nope', '{"id":"a","prompt":"y"}', '{"id":"c"}'].join('\n'));
    const check = await checkManifest(p);
    expect(check.issues).toEqual([
      { line: 2, message: expect.stringMatching(/^invalid JSON/) },
      { line: 3, message: 'duplicate id "a" (first on line 1)' },
      { line: 4, message: 'missing "prompt"' },
    ]);
    expect(check.count).toBe(1);
  });

  it('rejects a run whose model the catalog does not have, naming the field', async () => {
    const p = write('ok.jsonl', '{"id":"a","prompt":"x"}\n');
    const err = await engine.service.createRun({ manifestPath: p, models: ['mock-fast', 'nope'], epochs: 1 }).catch((e: unknown) => e);
    expect((err as PanoptesError).where).toBe('models[1]');
    const err2 = await engine.service.createRun({ manifestPath: p, models: [], epochs: 0 }).catch((e: unknown) => e);
    expect((err2 as PanoptesError).message).toMatch(/models: choose at least one model/);
    expect((err2 as PanoptesError).message).toMatch(/epochs: at least 1/);
    expect(engine.store.queries.listRuns()).toEqual([]);
  });

  it('streams a large manifest without reading it into one string', async () => {
    const p = join(tmp.dir, 'large.jsonl');
    const line = (i: number) => JSON.stringify({ id: `v${i}`, prompt: 'x'.repeat(200) }) + '\n';
    const chunks: string[] = [];
    for (let i = 0; i < 100_000; i++) chunks.push(line(i));
    writeFileSync(p, chunks.join(''));
    const before = process.memoryUsage().heapUsed;
    let n = 0;
    let peak = 0;
    for await (const _ of readManifest(p)) {
      if (++n % 10_000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed - before);
    }
    expect(n).toBe(100_000);
    // ~23 MB of text; streaming keeps the heap growth far below holding it all as objects.
    expect(peak).toBeLessThan(60 * 1024 * 1024);
  });
  it('accepts a UTF-8 byte order mark at the start of the file', async () => {
    const p = join(tmp.dir, 'bom.jsonl');
    writeFileSync(p, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"id":"a","prompt":"A?"}\n{"id":"b","prompt":"B?"}\n')]));
    const run = await engine.service.createRun({ manifestPath: p, models: ['mock-fast'], epochs: 1 });
    expect(run.vignetteCount).toBe(2);
    const got = [];
    for await (const v of readManifest(p)) got.push(v.id);
    expect(got).toEqual(['a', 'b']);
  });

  it('refuses invalid UTF-8 with its line, instead of storing replacement characters', async () => {
    const p = join(tmp.dir, 'latin1.jsonl');
    writeFileSync(p, Buffer.concat([Buffer.from('{"id":"a","prompt":"ok"}\n{"id":"b","prompt":"caf'), Buffer.from([0xe9]), Buffer.from('"}\n')]));
    const err = await expectRejected(p, /latin1\.jsonl:2: not valid UTF-8 \(first bad byte at byte 24 of the line\)/);
    expect(err.where).toBe(`${p}:2`);
  });

  it('refuses metadata nested deeper than 64 levels with its line (20,000 deep overflows nothing)', async () => {
    const deep = `{"id":"d","prompt":"p","metadata":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`;
    const p = write('deep.jsonl', `{"id":"a","prompt":"A?"}\n${deep}\n`);
    await expectRejected(p, /deep\.jsonl:2: "metadata\.a\.a\.a\.a\.a\.\.\." nests deeper than 64 levels/);
    const ok = write('shallow.jsonl', `{"id":"d","prompt":"p","metadata":${'{"a":'.repeat(60)}1${'}'.repeat(60)}}\n`);
    expect((await checkManifest(ok)).issues).toEqual([]);
  });

  it('refuses an escaped lone surrogate in any string or key with its line', async () => {
    await expectRejected(write('s1.jsonl', '{"id":"a","prompt":"A?"}\n{"id":"b","prompt":"half \\ud83d of a face"}\n'), /s1\.jsonl:2: "prompt" holds a lone UTF-16 surrogate/);
    await expectRejected(write('s2.jsonl', '{"id":"a","prompt":"A?","metadata":{"tags":["x","\\udc00"]}}\n'), /s2\.jsonl:1: "metadata\.tags\.1" holds a lone UTF-16 surrogate/);
    await expectRejected(write('s3.jsonl', '{"id":"a","prompt":"A?","\\ud800k":1}\n'), /s3\.jsonl:1: a key in the line holds a lone UTF-16 surrogate/);
    // A pair written as two escapes is one character, and fine.
    expect((await checkManifest(write('pair.jsonl', '{"id":"a","prompt":"\\ud83d\\ude00"}\n'))).issues).toEqual([]);
  });

  it('treats "target", "system" and "metadata" given as null as not given', async () => {
    const p = write('nulls.jsonl', '{"id":"a","prompt":"A?","target":null,"system":null,"metadata":null}\n{"id":"b","prompt":"B?","target":"B"}\n');
    const got = [];
    for await (const v of readManifest(p)) got.push(v);
    expect(got).toEqual([
      { index: 0, id: 'a', prompt: 'A?' },
      { index: 1, id: 'b', prompt: 'B?', target: 'B' },
    ]);
  });
});
