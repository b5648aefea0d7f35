/**
 * Reads a folder for a pack: walks it (never into skipped folders), follows a symbolic link only to a
 * file inside the folder (a link out of it, or to a folder, is left out), and refuses the whole
 * folder once its packable files pass the byte limit, before reading their content.
 * Runs on: Node (core).
 */
import { lstat, readFile, readdir, realpath, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { PanoptesError } from '../domain.js';
import { skippedFolder } from './file-rules.js';
import { RepoCollector, type RepoFiles } from './repo-files.js';

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep);
}

export async function readFolder(folder: string, maxBytes: number): Promise<RepoFiles> {
  const info = await stat(folder).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new PanoptesError('invalid_input', `no such folder: ${folder}`, { where: folder });
  }
  const root = await realpath(folder);
  const collector = new RepoCollector(folder, maxBytes);
  const toRead: { path: string; abs: string }[] = [];
  const pending = [''];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      const abs = join(root, path);
      if (entry.isDirectory()) {
        const reason = skippedFolder(entry.name);
        if (reason) collector.leaveOut(`${path}/`, reason);
        else pending.push(path);
        continue;
      }
      let target = abs;
      if (entry.isSymbolicLink()) {
        const resolved = await realpath(abs).catch(() => undefined);
        const targetInfo = resolved === undefined ? undefined : await lstat(resolved);
        if (resolved === undefined || !inside(root, resolved) || !targetInfo?.isFile()) {
          collector.leaveOut(path, 'symlink');
          continue;
        }
        target = resolved;
      } else if (!entry.isFile()) continue;
      if (collector.skipsPath(path)) continue;
      collector.count((await stat(target)).size);
      toRead.push({ path, abs: target });
    }
  }
  for (const f of toRead) await collector.add(f.path, await readFile(f.abs));
  return { name: basename(root), kind: 'folder', ...collector.sorted() };
}
