/**
 * Test helpers: temp data dirs, manifests and catalogs on real files.
 * Runs on: Node (tests).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CatalogData } from '../../core/models/catalog.js';

export function tempDir(prefix = 'panoptes-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function writeManifest(dir: string, count: number, name = 'manifest.jsonl'): string {
  const path = join(dir, name);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(JSON.stringify({ id: `v${i}`, prompt: `Question number ${i}: what is ${i} + ${i}?` }));
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

/** A manifest whose vignettes have a one-letter target (A..E in turn) and a `topic` (even/odd). */
export function writeTargetManifest(dir: string, count: number, name = 'targets.jsonl'): string {
  const path = join(dir, name);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    lines.push(JSON.stringify({ id: `q${i}`, prompt: `Which option is right for question ${i}?`, target: 'ABCDE'[i % 5], metadata: { topic: i % 2 ? 'odd' : 'even' } }));
  }
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

/** A catalog of mock models: name -> mock options (latencyMs, errorRate, errorKind, ...). */
export function writeMockCatalog(dir: string, models: Record<string, Record<string, unknown>>, name = 'catalog.json'): string {
  const data: CatalogData = {
    providers: { mocktest: { kind: 'mock', trainsOnData: false } },
    models: Object.fromEntries(
      Object.entries(models).map(([id, options]) => [
        id,
        { hosts: [{ provider: 'mocktest', model: id, contextWindow: 100_000, options }] },
      ]),
    ),
  };
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(data, null, 2));
  return path;
}
