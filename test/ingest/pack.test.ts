/**
 * `panoptes pack` on a generated repository: what is left out, the delimiters, the fit to an
 * 8,000-token window (a bulk file dropped, the tests kept), coverage, split, diff mode, and each
 * bad input refused in one line.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { c as createTar } from 'tar';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PanoptesError } from '../../core/domain.js';
import { runPack } from '../../core/cli/pack-run.js';
import { packRepository } from '../../core/ingest/pack.js';
import { readSource } from '../../core/ingest/pack-source.js';
import { parseSplit } from '../../core/ingest/split.js';
import { DEFAULT_MAX_BYTES } from '../../core/ingest/repo-files.js';
import { estimatePromptTokens } from '../../core/models/router/token-estimate.js';
import { tempDir } from '../helpers/temp.js';

let tmp: { dir: string; cleanup: () => void };
beforeEach(() => {
  tmp = tempDir('panoptes-pack-');
});
afterEach(() => tmp.cleanup());

function put(root: string, path: string, content: string | Buffer): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), content);
}

/** A function of about `lines` lines, different per name. */
function code(name: string, lines = 30): string {
  const body = Array.from({ length: lines }, (_, i) => `  const v${i} = ${name}Input.map((x) => x * ${i + 1}).filter((x) => x % ${i + 2} === 0);`).join('\n');
  return `export function ${name}(${name}Input: number[]): number {\n${body}\n  return ${name}Input.length;\n}\n`;
}

/** src/ (5 files), test/ and docs/, a large generated CSV, and everything a pack leaves out. */
function makeRepo(root: string): void {
  for (const n of ['alpha', 'beta', 'gamma', 'delta', 'epsilon']) put(root, `src/${n}.ts`, code(n));
  put(root, 'test/alpha.test.ts', `import { alpha } from '../src/alpha';\nit('alpha', () => expect(alpha([1, 2])).toBe(2));\n`);
  put(root, 'docs/guide.md', '# Guide\n\nCall `alpha` with numbers.\n');
  put(root, 'README.md', '# demo\n');
  put(root, 'data/fixtures.csv', Array.from({ length: 2500 }, (_, i) => `${i},row ${i},${(i * 7919) % 1000}`).join('\n'));
  put(root, 'node_modules/left/index.js', 'module.exports = 1;\n');
  put(root, 'vendor/lib.js', 'var vendored = true;\n');
  put(root, '.git/config', '[core]\n');
  put(root, 'package-lock.json', '{"lockfileVersion": 3}\n');
  put(root, 'yarn.lock', '# yarn\n');
  put(root, 'logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13]));
  put(root, 'blob.bin2', Buffer.from([1, 2, 0, 0, 0, 5, 6, 0, 0, 9]));
}

const packOpts = { models: ['small', 'big'], window: 8000, answerTokens: 2000 };

describe('pack: a folder', () => {
  it('leaves out binaries, lockfiles, node_modules, .git and vendored folders, and delimits each file', async () => {
    const root = join(tmp.dir, 'repo');
    makeRepo(root);
    const repo = await readSource(root, { maxBytes: DEFAULT_MAX_BYTES });
    expect(repo.files.map((f) => f.path)).toEqual([
      'README.md', 'data/fixtures.csv', 'docs/guide.md', 'src/alpha.ts', 'src/beta.ts', 'src/delta.ts', 'src/epsilon.ts', 'src/gamma.ts', 'test/alpha.test.ts',
    ]);
    expect(Object.fromEntries(repo.leftOut.map((f) => [f.path, f.reason]))).toEqual({
      '.git/': 'vcs',
      'blob.bin2': 'binary',
      'logo.png': 'binary',
      'node_modules/': 'dependency',
      'package-lock.json': 'lockfile',
      'vendor/': 'vendored',
      'yarn.lock': 'lockfile',
    });
    const [v] = await packRepository(repo, { ...packOpts, window: 200_000, instruction: 'Review this repository.' });
    expect(v!.prompt.startsWith('Review this repository.\n\nRepository repo')).toBe(true);
    expect(v!.prompt).toContain('===== FILE: src/alpha.ts =====\nexport function alpha(');
    expect(v!.prompt).toContain('===== FILE: test/alpha.test.ts =====\n');
    expect(v!.prompt).not.toContain('vendored');
    expect(v!.metadata.coverage).toMatchObject({ files: 9, totalFiles: 9, ratio: 1 });
    expect(v!.metadata.leftOut).toEqual({ vcs: 1, binary: 2, dependency: 1, lockfile: 2, vendored: 1 });
  });

  it('fits an 8,000-token window: the bulk file dropped, the tests and docs kept, coverage told', async () => {
    const root = join(tmp.dir, 'repo');
    makeRepo(root);
    const [v, more] = await packRepository(await readSource(root, { maxBytes: DEFAULT_MAX_BYTES }), packOpts);
    expect(more).toBeUndefined();
    expect(v!.metadata.dropped).toEqual(['data/fixtures.csv']);
    expect(v!.prompt).toContain('===== FILE: test/alpha.test.ts =====');
    expect(v!.prompt).toContain('===== FILE: docs/guide.md =====');
    expect(v!.prompt).toContain('8 of 9 files are included');
    const csv = readFileSync(join(root, 'data/fixtures.csv'), 'utf8').length;
    const c = v!.metadata.coverage;
    expect(c.files).toBe(8);
    expect(c.totalFiles).toBe(9);
    expect(c.totalChars - c.chars).toBe(csv);
    expect(c.ratio).toBeCloseTo(c.chars / c.totalChars, 4);
    // The router's own estimate agrees: the prompt plus the room for the answer fits the window.
    const tokens = await estimatePromptTokens([{ role: 'user', content: v!.prompt }]);
    expect(tokens).toBe(v!.metadata.fit.promptTokens);
    expect(tokens + packOpts.answerTokens).toBeLessThanOrEqual(8000);
    expect(v!.metadata.fit).toMatchObject({ models: ['small', 'big'], window: 8000 });
  });

  it('drops source before tests and docs when bulk is not enough', async () => {
    const root = join(tmp.dir, 'repo');
    makeRepo(root);
    const [v] = await packRepository(await readSource(root, { maxBytes: DEFAULT_MAX_BYTES }), { ...packOpts, window: 3000, answerTokens: 1000 });
    expect(v!.metadata.dropped).toContain('data/fixtures.csv');
    expect(v!.metadata.dropped.some((p) => p.startsWith('src/'))).toBe(true);
    expect(v!.metadata.dropped.filter((p) => p.startsWith('test/') || p.startsWith('docs/'))).toEqual([]);
  });

  it('--split packs one vignette per top-level folder when one does not fit', async () => {
    const root = join(tmp.dir, 'repo');
    makeRepo(root);
    const vs = await packRepository(await readSource(root, { maxBytes: DEFAULT_MAX_BYTES }), { ...packOpts, split: { by: 'folder' } });
    expect(vs.map((v) => v.id)).toEqual(['repo/.', 'repo/data', 'repo/docs', 'repo/src', 'repo/test']);
    const src = vs.find((v) => v.id === 'repo/src')!;
    expect(src.metadata.coverage).toMatchObject({ files: 5, totalFiles: 5, ratio: 1 });
    expect(src.metadata.group).toBe('src');
    // One file that alone is over the budget is still dropped, and says so.
    expect(vs.find((v) => v.id === 'repo/data')!.metadata.coverage.files).toBe(0);
  });

  it('--split N packs N files a vignette in path order, each group labelled by its number', async () => {
    const root = join(tmp.dir, 'repo');
    makeRepo(root);
    const repo = await readSource(root, { maxBytes: DEFAULT_MAX_BYTES });
    const vs = await packRepository(repo, { ...packOpts, split: { by: 'files', count: 3 } });
    const total = repo.files.length;
    expect(vs).toHaveLength(Math.ceil(total / 3));
    expect(vs.map((v) => v.id)).toEqual(vs.map((_, i) => `repo/${i + 1}`));
    expect(vs.map((v) => v.metadata.coverage.totalFiles)).toEqual(vs.map((_, i) => Math.min(3, total - 3 * i)));
    // Every file in exactly one vignette, in path order, or dropped from its group's and said so.
    // (The instruction at the top shows the delimiter with the placeholder `path`.)
    const packed = vs.flatMap((v) => [...v.prompt.matchAll(/===== FILE: (.+) =====/g)].map((m) => m[1]!).filter((p) => p !== 'path'));
    const dropped = vs.flatMap((v) => v.metadata.dropped);
    expect(dropped).toEqual(['data/fixtures.csv']);
    expect([...packed, ...dropped].sort()).toEqual(repo.files.map((f) => f.path).sort());
    expect(packed).toEqual(repo.files.map((f) => f.path).filter((p) => !dropped.includes(p)));
    expect(() => parseSplit('0')).toThrow('--split must be "folder" or a number of files, not "0"');
    expect(() => parseSplit('2.5')).toThrow(/not "2\.5"/);
  });

  it("--prompt puts a file's content before the files when a file has that name, else the text itself", async () => {
    const root = join(tmp.dir, 'repo');
    makeRepo(root);
    const catalog = join(tmp.dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({ providers: { m: { kind: 'mock', trainsOnData: false } }, models: { big: { hosts: [{ provider: 'm', model: 'big', contextWindow: 128000 }] } } }));
    const instruction = join(tmp.dir, 'review.md');
    writeFileSync(instruction, 'Review this repository for data races.\n');
    const out = join(tmp.dir, 'pack.jsonl');
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      await runPack(root, { dataDir: join(tmp.dir, 'data'), catalog: [catalog], models: 'big', out, prompt: instruction });
      const fromFile = JSON.parse(readFileSync(out, 'utf8').trim()) as { prompt: string };
      expect(fromFile.prompt.startsWith('Review this repository for data races.')).toBe(true);
      expect(fromFile.prompt).not.toContain(instruction);
      await runPack(root, { dataDir: join(tmp.dir, 'data'), catalog: [catalog], models: 'big', out, prompt: 'List every exported function.' });
      const fromText = JSON.parse(readFileSync(out, 'utf8').trim()) as { prompt: string };
      expect(fromText.prompt.startsWith('List every exported function.')).toBe(true);
      expect(fromText.prompt.indexOf('List every exported function.')).toBeLessThan(fromText.prompt.indexOf('===== FILE: '));
    } finally {
      write.mockRestore();
    }
  });

  it('does not follow a symbolic link out of the folder', async () => {
    const root = join(tmp.dir, 'repo');
    makeRepo(root);
    put(tmp.dir, 'secret.txt', 'TOP SECRET\n');
    symlinkSync(join(tmp.dir, 'secret.txt'), join(root, 'outside.txt'));
    symlinkSync(join(root, 'src/alpha.ts'), join(root, 'inside.ts'));
    const repo = await readSource(root, { maxBytes: DEFAULT_MAX_BYTES });
    expect(repo.leftOut).toContainEqual({ path: 'outside.txt', reason: 'symlink' });
    expect(repo.files.map((f) => f.path)).toContain('inside.ts');
    const [v] = await packRepository(repo, { ...packOpts, window: 200_000 });
    expect(v!.prompt).not.toContain('TOP SECRET');
  });

  it('writes the manifest with runPack, fitted to the smallest window of the chosen models', async () => {
    const root = join(tmp.dir, 'repo');
    makeRepo(root);
    const catalog = join(tmp.dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({
      providers: { m: { kind: 'mock', trainsOnData: false } },
      models: {
        small: { hosts: [{ provider: 'm', model: 'small', contextWindow: 8000 }] },
        big: { hosts: [{ provider: 'm', model: 'big', contextWindow: 128000 }] },
      },
    }));
    const out = join(tmp.dir, 'pack.jsonl');
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      await runPack(root, { dataDir: join(tmp.dir, 'data'), catalog: [catalog], models: 'small,big', out });
    } finally {
      write.mockRestore();
    }
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; prompt: string; metadata: { fit: { window: number; answerTokens: number }; dropped: string[] } });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.id).toBe('repo');
    expect(lines[0]!.metadata.fit).toMatchObject({ window: 8000, answerTokens: 2000 });
    expect(lines[0]!.metadata.dropped).toEqual(['data/fixtures.csv']);
    await expect(runPack(root, { dataDir: join(tmp.dir, 'data'), catalog: [catalog], models: 'smal', out })).rejects.toThrow(/unknown model "smal"; did you mean small/);
  });
});

describe('pack: a tarball', () => {
  it('reads a .tar.gz streaming, without its top folder, leaving links out', async () => {
    const root = join(tmp.dir, 'repo-1a2b3c');
    makeRepo(root);
    symlinkSync('/etc/hosts', join(root, 'hosts'));
    const file = join(tmp.dir, 'repo.tar.gz');
    await createTar({ gzip: true, file, cwd: tmp.dir, portable: true }, ['repo-1a2b3c']);
    const repo = await readSource(file, { maxBytes: DEFAULT_MAX_BYTES });
    expect(repo.kind).toBe('tarball');
    expect(repo.name).toBe('repo-1a2b3c');
    expect(repo.files.map((f) => f.path)).toContain('src/alpha.ts');
    expect(repo.files.map((f) => f.path)).not.toContain('node_modules/left/index.js');
    expect(repo.leftOut).toContainEqual({ path: 'hosts', reason: 'symlink' });
    expect(repo.leftOut).toContainEqual({ path: 'logo.png', reason: 'binary' });
    expect(repo.files.find((f) => f.path === 'src/beta.ts')!.text).toBe(code('beta'));
  });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', '-C', cwd, ...args], { encoding: 'utf8' });
}

describe('pack: --diff', () => {
  it('packs only the changed files as they are at the head, with the unified diff', async () => {
    const root = join(tmp.dir, 'repo');
    makeRepo(root);
    git(tmp.dir, 'init', '-q', root);
    writeFileSync(join(root, '.gitignore'), 'node_modules\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'first');
    put(root, 'src/alpha.ts', code('alpha', 31));
    put(root, 'src/zeta.ts', code('zeta', 3));
    put(root, 'yarn.lock', '# changed\n');
    git(root, 'rm', '-q', 'src/beta.ts');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'second');
    const repo = await readSource(root, { diff: 'HEAD~1..HEAD', maxBytes: DEFAULT_MAX_BYTES });
    expect(repo.files.map((f) => f.path)).toEqual(['src/alpha.ts', 'src/zeta.ts']);
    expect(repo.leftOut).toEqual([{ path: 'yarn.lock', reason: 'lockfile' }]);
    const [v] = await packRepository(repo, { ...packOpts, window: 200_000 });
    expect(v!.prompt).toContain('===== DIFF: HEAD~1..HEAD =====\ndiff --git a/src/alpha.ts b/src/alpha.ts');
    expect(v!.prompt).toContain('+  const v30 = alphaInput');
    expect(v!.prompt).toContain('deleted file mode');
    expect(v!.prompt).toContain('===== FILE: src/zeta.ts =====');
    expect(v!.metadata).toMatchObject({ source: 'diff', diff: { base: 'HEAD~1', head: 'HEAD' } });
  });

  it('refuses a ref that does not exist, and a folder that is not a repository', async () => {
    const root = join(tmp.dir, 'repo');
    makeRepo(root);
    await expect(readSource(root, { diff: 'main..HEAD', maxBytes: DEFAULT_MAX_BYTES })).rejects.toThrow(/is not a git repository/);
    git(tmp.dir, 'init', '-q', root);
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'first');
    await expect(readSource(root, { diff: 'nope..HEAD', maxBytes: DEFAULT_MAX_BYTES })).rejects.toThrow(`no such ref in ${root}: nope`);
    await expect(readSource(root, { diff: '--output=x..HEAD', maxBytes: DEFAULT_MAX_BYTES })).rejects.toThrow(/--diff must be BASE..HEAD/);
    await expect(readSource(root, { diff: 'HEAD', maxBytes: DEFAULT_MAX_BYTES })).rejects.toThrow(/--diff must be BASE..HEAD/);
  });
});

describe('pack: bad input is refused in one line', () => {
  async function refusal(p: Promise<unknown>): Promise<string> {
    const err = await p.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(PanoptesError);
    const message = (err as PanoptesError).message;
    expect(message).not.toContain('\n');
    return message;
  }

  it('no such folder', async () => {
    expect(await refusal(readSource(join(tmp.dir, 'missing'), { maxBytes: DEFAULT_MAX_BYTES }))).toBe(`no such folder or file: ${join(tmp.dir, 'missing')}`);
  });

  it('a tarball that is not one', async () => {
    const text = join(tmp.dir, 'fake.tar.gz');
    writeFileSync(text, 'just text, not an archive\n');
    expect(await refusal(readSource(text, { maxBytes: DEFAULT_MAX_BYTES }))).toBe(`${text} is not a .tar.gz: no gzip header`);
    const gz = join(tmp.dir, 'gz.tar.gz');
    writeFileSync(gz, (await import('node:zlib')).gzipSync(Buffer.from('plain text in gzip, no tar headers at all '.repeat(40))));
    expect(await refusal(readSource(gz, { maxBytes: DEFAULT_MAX_BYTES }))).toMatch(/gz\.tar\.gz is not a \.tar\.gz: /);
  });

  it('a repository larger than --max-bytes, as a folder and as a tarball', async () => {
    const root = join(tmp.dir, 'repo');
    makeRepo(root);
    expect(await refusal(readSource(root, { maxBytes: 10_000 }))).toBe(`${root} holds more than 10000 bytes of files to pack (--max-bytes 10000)`);
    const file = join(tmp.dir, 'repo.tar.gz');
    await createTar({ gzip: true, file, cwd: tmp.dir }, ['repo']);
    expect(await refusal(readSource(file, { maxBytes: 10_000 }))).toBe(`${file} holds more than 10000 bytes of files to pack (--max-bytes 10000)`);
  });
});
