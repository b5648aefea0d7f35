/**
 * vitest's JSON report, written to test-results/vitest.json on every run (the folder is ignored by
 * git) without the line vitest's own JSON reporter prints about it, so the console reads as it did.
 * `node scripts/test-durations.mjs test-results/vitest.json` turns a full run's report into the
 * table of per-file durations in docs/contributing/tests.md.
 * Runs on: Node (tests).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { JsonReporter } from 'vitest/reporters';

export const JSON_REPORT = 'test-results/vitest.json';

export default class JsonFileReporter extends JsonReporter {
  constructor() {
    super({ outputFile: JSON_REPORT });
  }

  override async writeReport(report: string): Promise<void> {
    const file = resolve(this.ctx.config.root, JSON_REPORT);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, report, 'utf8');
  }
}
