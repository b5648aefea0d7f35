/**
 * A JSON scoring file that does not parse is refused with the file, line and column where the
 * parser stopped, for a stray character and for a file that ends too soon.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { readScoringFile } from '../../core/cli/scoring-file.js';
import { tempDir } from '../helpers/temp.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

it('names file:line:column', async () => {
  const path = join(tmp.dir, 'scoring.json');
  const refused = async (text: string) => {
    writeFileSync(path, text);
    return readScoringFile(path).then(
      () => 'read',
      (e: { where: string }) => e.where,
    );
  };
  expect(await refused('{\n  "scorers": [\n    {"name": "x",}\n  ]\n}')).toBe(`${path}:3:18`);
  expect(await refused('{"scorers": [\n  {"name": "x", "type": "match"}')).toBe(`${path}:2:33`);
  expect(await refused('{"scorers": [{"name": "x", "type": "match"}]}')).toBe('read');
});
