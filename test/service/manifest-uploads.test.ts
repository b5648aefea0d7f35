/**
 * A manifest kept in the data folder is hashed and written a megabyte at a time: the same text
 * given whole or as lines is kept once, at the same path, byte for byte, a surrogate pair falling
 * on a slice's edge included.
 * Runs on: Node (tests).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManifestUploads } from '../../core/service/manifest-uploads.js';
import { tempDir } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

it('keeps the same text whole or in lines at one path, exactly, over several slices', async () => {
  // An emoji (two UTF-16 units) straddles the first 1,048,576-character slice's edge.
  const first = `${JSON.stringify({ id: 'a', prompt: `${'x'.repeat(1_048_575 - 20)}😀` })}\n`;
  expect(first.charCodeAt(1_048_575)).toBe(0xd83d);
  const lines = [first, `${JSON.stringify({ id: 'b', prompt: 'é'.repeat(1_200_000) })}\n`];
  const text = lines.join('');
  const uploads = new ManifestUploads(join(tmp.dir, 'data'));
  const whole = await uploads.keep(text, 'm.jsonl');
  const byLines = await uploads.keep(lines, 'm.jsonl');
  expect(byLines).toBe(whole);
  expect(readFileSync(whole, 'utf8') === text).toBe(true);
  // The folder is named by the digest of the text's UTF-8, as before slices.
  expect(whole).toBe(join(tmp.dir, 'data', 'manifests', createHash('sha256').update(text).digest('hex').slice(0, 16), 'm.jsonl'));
});
