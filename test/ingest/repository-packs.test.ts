/**
 * The contract's repository packs on real folders, tarballs and git repositories: the manifest is
 * kept in the data folder's `manifests/` and a run starts from it; absurd inputs (an empty folder,
 * a huge file, a symlink out of the folder, a FIFO inside it or named as the source, bad refs and
 * fields) are refused naming the contract's field, and leave nothing in `manifests/`; a pack is
 * cancelled by its id, stopped by its time limit, and a third pack at once is refused.
 * Runs on: Node (tests).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { c as createTar } from 'tar';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../core/service/load-catalog.js';
import { ManifestUploads } from '../../core/service/manifest-uploads.js';
import { RepositoryPacks } from '../../core/service/repository-packs.js';
import { failureOf } from '../helpers/failure-of.js';
import { useTempEngines } from '../helpers/temp-engine.js';
import { writeMockCatalog } from '../helpers/temp.js';

function put(root: string, path: string, content: string | Buffer): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), content);
}

function makeRepo(root: string, files = 3): void {
  for (let i = 0; i < files; i++) put(root, `src/file${i}.ts`, `export const value${i} = ${i};\n`);
  put(root, 'test/file0.test.ts', `it('value0', () => expect(value0).toBe(0));\n`);
  put(root, 'README.md', '# demo\n');
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-C', cwd, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { stdio: 'ignore' });
}

describe('packRepository', () => {
  const engines = useTempEngines('panoptes-packs-');
  const open = () => engines.open({ catalogPaths: [writeMockCatalog(engines.dir, { fast: {}, other: {} })], tickMs: 10 });
  const manifests = () => join(engines.dir, 'data', 'manifests');
  const keptFiles = () => (existsSync(manifests()) ? readdirSync(manifests()) : []);

  it('packs a folder into a manifest in the data folder, and a run starts from it', async () => {
    const engine = open();
    const root = join(engines.dir, 'repo');
    makeRepo(root);
    const pack = await engine.service.packRepository({ source: root, models: ['fast', 'other'], instruction: 'Review this repository.' });
    expect(pack.manifestPath.startsWith(manifests())).toBe(true);
    expect(pack).toMatchObject({ repository: 'repo', source: 'folder', window: 100_000, answerTokens: 4096 });
    expect(pack.vignettes).toEqual([
      { id: 'repo', coverage: expect.objectContaining({ files: 5, totalFiles: 5, ratio: 1 }), dropped: 0, promptTokens: expect.any(Number) },
    ]);
    const [line] = readFileSync(pack.manifestPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { prompt: string; metadata: { fit: { models: string[] } } });
    expect(line!.prompt.startsWith('Review this repository.\n\nRepository repo')).toBe(true);
    expect(line!.prompt).toContain('===== FILE: src/file1.ts =====\nexport const value1 = 1;\n');
    expect(line!.metadata.fit.models).toEqual(['fast', 'other']);

    const run = await engine.service.createRun({ manifestPath: pack.manifestPath, models: ['fast'], epochs: 1 });
    expect(run.vignetteCount).toBe(1);
    expect((await engine.runToEnd(run.id)).status).toBe('done');
  });

  it('packs a .tar.gz and a git diff', async () => {
    const engine = open();
    const root = join(engines.dir, 'repo');
    makeRepo(root);
    const tarball = join(engines.dir, 'repo.tar.gz');
    await createTar({ gzip: true, file: tarball, cwd: engines.dir }, ['repo']);
    const fromTar = await engine.service.packRepository({ source: tarball, models: ['fast'] });
    expect(fromTar).toMatchObject({ repository: 'repo', source: 'tarball' });
    expect(fromTar.vignettes[0]!.coverage.files).toBe(5);

    git(root, 'init', '-q', '-b', 'main');
    git(root, 'add', '.');
    git(root, 'commit', '-q', '-m', 'base');
    put(root, 'src/file1.ts', 'export const value1 = 100;\n');
    git(root, 'commit', '-q', '-am', 'head');
    const fromDiff = await engine.service.packRepository({ source: root, models: ['fast'], diff: 'HEAD~1..HEAD' });
    expect(fromDiff).toMatchObject({ source: 'diff' });
    expect(fromDiff.vignettes[0]!.coverage.files).toBe(1);
    expect(fromDiff.manifestPath).toMatch(/repo-diff-pack\.jsonl$/);
    expect(readFileSync(fromDiff.manifestPath, 'utf8')).toContain('+export const value1 = 100;');

    const noRef = await failureOf(engine.service.packRepository({ source: root, models: ['fast'], diff: 'HEAD..nosuchref' }));
    expect(noRef.where).toBe('diff');
    expect(noRef.message).toMatch(/^diff: no such ref in .*: nosuchref$/);
    const option = await failureOf(engine.service.packRepository({ source: root, models: ['fast'], diff: '--output=/tmp/x..HEAD' }));
    expect(option.where).toBe('diff');
  });

  it('refuses an empty folder, a huge file and an unknown model naming the field, keeping nothing', async () => {
    const engine = open();
    const empty = join(engines.dir, 'empty');
    mkdirSync(empty);
    const none = await failureOf(engine.service.packRepository({ source: empty, models: ['fast'] }));
    expect([none.where, none.message]).toEqual(['source', 'source: empty has no text files to pack']);

    const big = join(engines.dir, 'big');
    makeRepo(big);
    writeFileSync(join(big, 'huge.ts'), '');
    truncateSync(join(big, 'huge.ts'), 60 * 1024 * 1024); // sparse: 60 MB counted, none of it on disk
    const huge = await failureOf(engine.service.packRepository({ source: big, models: ['fast'] }));
    expect(huge.where).toBe('source');
    expect(huge.message).toBe(`source: ${big} holds more than 52428800 bytes of files to pack (maxBytes 52428800)`);
    const missing = await failureOf(engine.service.packRepository({ source: join(engines.dir, 'missing'), models: ['fast'] }));
    expect([missing.where, missing.message]).toEqual(['source', `source: no such folder or file: ${join(engines.dir, 'missing')}`]);

    const model = await failureOf(engine.service.packRepository({ source: big, models: ['fast', 'nope'] }));
    expect(model.where).toBe('models[1]');
    expect(model.message).toMatch(/^models\[1\]: unknown model "nope"; did you mean "/);
    const ceiling = await failureOf(engine.service.packRepository({ source: big, models: ['fast'], maxBytes: 1e12 }));
    expect(ceiling.where).toBe('maxBytes');
    const room = await failureOf(engine.service.packRepository({ source: empty, models: ['fast'], answerTokens: 200_000 }));
    expect([room.where, room.message]).toEqual(['answerTokens', 'answerTokens: answerTokens 200000 leaves no room in the window of 100000 tokens']);
    expect(keptFiles()).toEqual([]);
  });

  it('leaves out a symlink escaping the folder and a FIFO inside it, and refuses a FIFO as the source at once', async () => {
    const engine = open();
    const root = join(engines.dir, 'repo');
    makeRepo(root);
    put(engines.dir, 'secret.txt', 'TOP-SECRET-OUTSIDE\n');
    symlinkSync(join(engines.dir, 'secret.txt'), join(root, 'escape.txt'));
    symlinkSync(engines.dir, join(root, 'parent'));
    execFileSync('mkfifo', [join(root, 'pipe.ts')]);
    const pack = await engine.service.packRepository({ source: root, models: ['fast'] });
    expect(pack.leftOut).toEqual({ symlink: 2, special: 1 });
    expect(pack.vignettes[0]!.coverage.files).toBe(5);
    expect(readFileSync(pack.manifestPath, 'utf8')).not.toContain('TOP-SECRET-OUTSIDE');

    const fifo = join(engines.dir, 'source.tar.gz');
    execFileSync('mkfifo', [fifo]);
    const refused = await failureOf(engine.service.packRepository({ source: fifo, models: ['fast'] }));
    expect([refused.where, refused.message]).toEqual(['source', `source: ${fifo} is not a .tar.gz: not a regular file`]);
  });

  it('is cancelled by its id, and refuses the same id twice at once', async () => {
    const engine = open();
    const root = join(engines.dir, 'repo');
    makeRepo(root, 300);
    const packing = engine.service.packRepository({ source: root, models: ['fast'], packId: 'p1' });
    const twice = await failureOf(engine.service.packRepository({ source: root, models: ['fast'], packId: 'p1' }));
    expect([twice.code, twice.where]).toEqual(['conflict', 'packId']);
    expect(await engine.service.cancelPack({ packId: 'p1' })).toEqual({ cancelled: true });
    const cancelled = await failureOf(packing);
    expect([cancelled.code, cancelled.where, cancelled.message]).toEqual(['cancelled', 'packId', 'the pack "p1" was cancelled']);
    expect(await engine.service.cancelPack({ packId: 'p1' })).toEqual({ cancelled: false });
    expect(keptFiles()).toEqual([]);
    // The id is free again once its pack ended.
    expect((await engine.service.packRepository({ source: root, models: ['fast'], packId: 'p1' })).vignettes[0]!.coverage.files).toBe(302);
  });

  it('stops a pack past its time limit, and holds at most two packs in flight', async () => {
    const root = join(engines.dir, 'repo');
    makeRepo(root, 300);
    const dataDir = join(engines.dir, 'data');
    const catalog = loadCatalog(dataDir, [writeMockCatalog(engines.dir, { fast: {} })]);
    const packs = new RepositoryPacks({ catalog, uploads: new ManifestUploads(dataDir), timeLimitMs: 0 });
    const input = { source: root, models: ['fast'] };
    const first = packs.pack(input);
    const second = packs.pack(input);
    const third = await failureOf(packs.pack(input));
    expect([third.code, third.retryable]).toEqual(['conflict', true]);
    for (const p of [first, second]) {
      const late = await failureOf(p);
      expect([late.code, late.where]).toEqual(['timeout', 'source']);
      expect(late.message).toMatch(/^source: the pack took longer than 0 s and was stopped/);
    }
    expect(keptFiles()).toEqual([]);
  });
});
