/**
 * Atomic, durable replacement of a file: the new content or the old, its mode, no temporary file
 * left behind on success or failure.
 * Runs on: Node (tests).
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { replaceAtomically, temporaryPathFor, writeFileAtomicSync } from '../../core/atomic-write.js';
import { tempDir } from '../helpers/temp.js';

describe('atomic writes', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => cleanups.splice(0).forEach((c) => c()));
  const folder = (): string => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    return t.dir;
  };

  it('replaces a file with its new content and mode, leaving no temporary file', () => {
    const dir = folder();
    const path = join(dir, 'token');
    writeFileSync(path, 'old\n');
    writeFileAtomicSync(path, 'new\n', 0o600);
    expect(readFileSync(path, 'utf8')).toBe('new\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['token']);
  });

  it('keeps the old file and removes the temporary one when the rename cannot happen', () => {
    const dir = folder();
    const path = join(dir, 'target');
    mkdirSync(path); // a folder in the way: rename of a file over it fails
    expect(() => writeFileAtomicSync(path, 'x')).toThrow();
    expect(readdirSync(dir)).toEqual(['target']);
  });

  it('moves a streamed temporary file into place', async () => {
    const dir = folder();
    const path = join(dir, 'export.jsonl');
    const tmp = temporaryPathFor(path);
    writeFileSync(tmp, '{"a":1}\n');
    await replaceAtomically(tmp, path);
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n');
    expect(readdirSync(dir)).toEqual(['export.jsonl']);
  });
});
