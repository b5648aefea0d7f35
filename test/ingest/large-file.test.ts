/**
 * A large text file is read a megabyte at a time (a turn of the event loop between slices) and
 * comes out exactly as written, a multi-byte character cut at a slice's end included; it is
 * counted slice by slice (so no step copies it whole), to the same tokens as its block counted whole.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { readFolder } from '../../core/ingest/folder-source.js';
import { startBatch } from '../../core/ingest/pack.js';
import { fileBlock } from '../../core/ingest/pack-prompt.js';
import { estimateTextTokens } from '../../core/models/router/token-estimate.js';
import { tempDir } from '../helpers/temp.js';

it('decodes a 3 MB file of two-byte characters, slice boundaries falling mid-character, exactly', async () => {
  const tmp = tempDir();
  try {
    const repo = join(tmp.dir, 'repo');
    mkdirSync(repo);
    // One ASCII byte first: every 2-byte "é" then straddles the 1 MiB slice boundaries.
    const text = `x${'é'.repeat(1_500_000)}\nend\n`;
    writeFileSync(join(repo, 'big.md'), text);
    const files = await readFolder(repo, 50 * 1024 * 1024);
    expect(files.files).toHaveLength(1);
    const file = files.files[0]!;
    expect(file.text === text).toBe(true);
    expect(file.slices!.length).toBe(3);
    expect(file.slices!.join('') === text).toBe(true);
    const { batch, counts } = startBatch(files.files);
    expect(batch[0]!.block === `===== FILE: big.md =====\n${text}\n`).toBe(true);
    const [sliced] = await counts;
    const [whole] = await estimateTextTokens([fileBlock({ path: 'big.md', text })]);
    // Both sample and extrapolate; slice by slice samples more of it, so they agree within a percent.
    expect(Math.abs(sliced! - whole!) / whole!).toBeLessThan(0.01);
  } finally {
    tmp.cleanup();
  }
});
