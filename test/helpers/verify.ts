/**
 * Checks that a run's records are exactly once everywhere: one row per (model, epoch, vignette)
 * in the database, and the same set, each once, in its responses.jsonl.
 * Runs on: Node (tests).
 */
import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { responsesPath } from '../../core/paths.js';
import type { Store } from '../../core/store/store.js';

export function expectExactlyOnce(store: Store, dataDir: string, runId: string): void {
  const run = store.queries.getRun(runId)!;
  const expected = run.vignetteCount * run.jobCount;
  const rows = store.queries.runResults(runId);
  const dbKeys = rows.map((r) => `${r.model}|${r.epoch}|${r.vignetteId}`);
  expect(dbKeys).toHaveLength(expected);
  expect(new Set(dbKeys).size).toBe(expected);

  const path = responsesPath(dataDir, runId);
  expect(existsSync(path)).toBe(true);
  const text = readFileSync(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as { model: string; epoch: number; vignette_id: string; seq: number });
  const fileKeys = lines.map((l) => `${l.model}|${l.epoch}|${l.vignette_id}`);
  expect(fileKeys).toHaveLength(expected);
  expect(new Set(fileKeys)).toEqual(new Set(dbKeys));
  // Lines are in sequence order, as the database assigned it.
  const seqs = lines.map((l) => l.seq);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
}
