/**
 * Reads a diff for a pack from a git folder: the files changed between two refs, as they are at
 * the head ref, and `git diff`'s unified output. git runs as a child process with argument arrays
 * (never a shell), and a ref that could be read as an option is refused before git sees it. The
 * repository's own configuration cannot make git run a program: textconv filters and external diff
 * drivers are switched off, and so is an fsmonitor hook.
 * Runs on: Node (core).
 */
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { promisify } from 'node:util';
import { PanoptesError } from '../domain.js';
import { abortReason, throwIfStopped } from './pack-abort.js';
import { RepoCollector, type RepoFiles } from './repo-files.js';

const run = promisify(execFile);

/** `BASE..HEAD` split, refused in one line when it is not that shape. */
export function parseDiffRange(range: string): { base: string; head: string } {
  const m = /^([^.\s][^\s]*?)\.\.([^.\s][^\s]*)$/.exec(range);
  if (!m || m[1]!.startsWith('-') || m[2]!.startsWith('-')) {
    throw new PanoptesError('invalid_input', `--diff must be BASE..HEAD (two refs), not "${range}"`, { where: '--diff' });
  }
  return { base: m[1]!, head: m[2]! };
}

async function git(cwd: string, args: string[], maxBuffer: number, signal?: AbortSignal): Promise<Buffer> {
  try {
    const { stdout } = await run('git', ['-C', cwd, '-c', 'core.quotepath=off', '-c', 'core.fsmonitor=false', ...args], {
      encoding: 'buffer',
      maxBuffer,
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' },
      ...(signal ? { signal } : {}),
    });
    return stdout;
  } catch (err) {
    if (signal?.aborted) throw abortReason(signal);
    throw err;
  }
}

async function verifyRef(root: string, ref: string): Promise<void> {
  try {
    await git(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], 1 << 16);
  } catch {
    throw new PanoptesError('invalid_input', `no such ref in ${root}: ${ref}`, { where: '--diff' });
  }
}

export async function readGitDiff(folder: string, range: string, maxBytes: number, signal?: AbortSignal): Promise<RepoFiles> {
  const { base, head } = parseDiffRange(range);
  if (!(await stat(folder).catch(() => undefined))?.isDirectory()) {
    throw new PanoptesError('invalid_input', `no such folder: ${folder}`, { where: folder });
  }
  let root: string;
  try {
    root = (await git(folder, ['rev-parse', '--show-toplevel'], 1 << 16)).toString('utf8').trim();
  } catch {
    throw new PanoptesError('invalid_input', `${folder} is not a git repository (--diff needs one)`, { where: folder });
  }
  await verifyRef(root, base);
  await verifyRef(root, head);
  const tooBig = () => new PanoptesError('invalid_input', `the diff ${range} holds more than ${maxBytes} bytes (--max-bytes ${maxBytes})`, { where: '--diff' });
  const gitBounded = (args: string[]) =>
    git(root, args, maxBytes, signal).catch((err: unknown) => {
      if ((err as { code?: unknown }).code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') throw tooBig();
      throw err;
    });
  const diff = (await gitBounded(['diff', '--no-color', '--no-ext-diff', '--no-textconv', base, head, '--'])).toString('utf8');
  const collector = new RepoCollector(range, maxBytes);
  collector.count(Buffer.byteLength(diff));
  const names = (await gitBounded(['diff', '--name-only', '-z', '--diff-filter=d', base, head, '--'])).toString('utf8');
  for (const path of names.split('\0').filter((p) => p !== '')) {
    throwIfStopped(signal);
    if (collector.skipsPath(path)) continue;
    const content = await gitBounded(['show', `${head}:${path}`]);
    collector.count(content.length);
    await collector.add(path, content);
  }
  return { name: basename(root), kind: 'diff', ...collector.sorted(), diff: { base, head, text: diff } };
}
