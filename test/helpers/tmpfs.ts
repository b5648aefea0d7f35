/**
 * A real tmpfs of a few KiB or MB, for the full-disk tests: mounting needs root on Linux in a
 * container that allows it, so those tests are skipped elsewhere, and say why in their name (not
 * Linux, not root, or the mount's own refusal).
 * Runs on: Node (tests).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { tempDir } from './temp.js';

/** Mounts a tmpfs of `size` (`16k`, `8m`) at `dir`, or resizes the one there (`remount`). */
export function mountTmpfs(dir: string, size: string, remount = false): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `${remount ? 'remount,' : ''}size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
}

/** Lazily unmounts the tmpfs at `dir` (a test's open files may still hold it). */
export function unmountTmpfs(dir: string): void {
  execFileSync('umount', ['-l', dir]);
}

/** Why no tmpfs can be mounted here (tried once, on a probe folder), or null when one can. */
const whyNoTmpfs: string | null = ((): string | null => {
  if (process.platform !== 'linux') return `needs Linux to mount a tmpfs, this is ${process.platform}`;
  if (process.getuid?.() !== 0) return 'needs root to mount a tmpfs';
  const probe = tempDir();
  try {
    mountTmpfs(probe.dir, '16k');
    execFileSync('umount', [probe.dir]);
    return null;
  } catch (err) {
    return `this container refuses to mount a tmpfs: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`;
  } finally {
    probe.cleanup();
  }
})();

/** Whether this process may mount a tmpfs. */
export const tmpfsMountable: boolean = whyNoTmpfs === null;

/** A describe name that says why it was skipped when no tmpfs can be mounted. */
export function onTmpfs(name: string): string {
  return whyNoTmpfs === null ? name : `${name} (skipped: ${whyNoTmpfs})`;
}

/** Writes a file at `path` until the disk refuses another byte. */
export function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (let size = chunk.length; size >= 1; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch {
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
}
