/**
 * A pairwise judge's baseline file read again to score, after a restart, is held again to the
 * folders it may be read from (a server's manifest roots), by the real path of the file opened,
 * and only then checked against its pinned sha256. Between attach and the re-read the path is
 * swapped for a symlink to an identical copy outside (which the hash alone would let through), a
 * FIFO, or the file grows past the bound: each is refused with an error naming the file, no judge
 * is asked, and no record is scored against it. The scorer version is the one attached: the real
 * path is not part of it. Real files, real engines opened again on the same data folder, and the
 * real `panoptes serve` (a child process) restarted on it, which holds the file to its roots.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_BASELINE_FILE_BYTES } from '../../core/scoring/judge/baseline-file.js';
import { Store } from '../../core/store/store.js';
import { serve, stopStarted } from '../helpers/serve.js';
import { writeTargetManifest } from '../helpers/temp.js';
import { useTempEngines } from '../helpers/temp-engine.js';

const tmp = useTempEngines('panoptes-baseline-reread-');
afterAll(stopStarted);

const ANSWERS = Array.from({ length: 4 }, (_, i) => JSON.stringify({ id: `q${i}`, response: 'A' })).join('\n') + '\n';

/** A run of 4 records, a pairwise judge against `manifests/baseline.jsonl` attached (pinned), nothing scored yet; the engine closed. */
async function attached(): Promise<{ dataDir: string; roots: string[]; baseline: string; runId: string; version: string }> {
  const dataDir = join(tmp.dir, 'data');
  const manifests = join(dataDir, 'manifests');
  mkdirSync(manifests, { recursive: true });
  const baseline = join(manifests, 'baseline.jsonl');
  writeFileSync(baseline, ANSWERS);
  const roots = [manifests];
  const e = tmp.open({ dataDir, baselineRoots: roots, tickMs: 20 });
  const run = await e.service.createRun({ manifestPath: writeTargetManifest(tmp.dir, 4), models: ['mock-strong'], epochs: 1 });
  await e.scheduler.runToCompletion(run.id);
  await e.scoring.stop();
  const judge = { name: 'vs-file', type: 'judge' as const, mode: 'pairwise' as const, judges: ['mock-judge'], rubric: 'Which is right?', baselineFile: baseline };
  await e.service.scoreRun({ runId: run.id, scorers: { scorers: [judge] } });
  const [scorer] = (await e.service.scoringStatus({ runId: run.id })).scorers;
  await e.close();
  return { dataDir, roots, baseline, runId: run.id, version: scorer!.version };
}

/** Opens the data folder again with the same roots and scores: the stored rows, the judge calls made (the router's metrics), and the versions. */
async function scoreAgain(a: Awaited<ReturnType<typeof attached>>) {
  const e = tmp.open({ dataDir: a.dataDir, baselineRoots: a.roots, tickMs: 20 });
  const calls = async () => (await e.service.metrics({})).providers.reduce((n, p) => n + p.calls, 0);
  const sweepCalls = await calls();
  e.scoring.start();
  await e.scoring.finish(a.runId);
  const rows = e.store.db.prepare(`SELECT explanation, failed FROM scores ORDER BY seq`).all() as { explanation: string; failed: number }[];
  const status = await e.service.scoringStatus({ runId: a.runId });
  const judgeCalls = (await calls()) - sweepCalls;
  return { rows, judgeCalls, status };
}

describe('a baseline file read again to score', () => {
  it('is read and judged when it is still what was attached, where it was', async () => {
    const a = await attached();
    const { rows, judgeCalls, status } = await scoreAgain(a);
    expect(rows).toHaveLength(4);
    expect(rows.every((r) => r.failed === 0)).toBe(true);
    expect(judgeCalls).toBeGreaterThan(0);
    expect(status.scorers[0]!.version).toBe(a.version);
  });

  const swaps: [string, (a: Awaited<ReturnType<typeof attached>>) => void, RegExp][] = [
    [
      'a symlink to an identical copy outside the roots',
      (a) => {
        const copy = join(tmp.dir, 'outside-copy.jsonl');
        writeFileSync(copy, ANSWERS);
        rmSync(a.baseline);
        symlinkSync(copy, a.baseline);
      },
      /\(the file it names now is outside the folders it may be read from: .*manifests\)/,
    ],
    [
      'a FIFO',
      (a) => {
        rmSync(a.baseline);
        execFileSync('mkfifo', [a.baseline]);
      },
      /\(not a regular file\)/,
    ],
    [
      'a file grown past the bound',
      (a) => truncateSync(a.baseline, MAX_BASELINE_FILE_BYTES + 1024 * 1024),
      /is \d+ bytes; baseline answers are held in memory, so files over \d+ bytes \(64 MiB\) are refused/,
    ],
  ];

  it.each(swaps)('swapped for %s after attach: refused naming the file, no judge asked, nothing judged', async (_, swap, reason) => {
    const a = await attached();
    swap(a);
    const { rows, judgeCalls, status } = await scoreAgain(a);
    // Every record refused with the file's name and the reason; none judged against the file.
    expect(rows).toHaveLength(4);
    for (const r of rows) {
      expect(r.failed).toBe(1);
      expect(r.explanation).toContain(`the baseline file "${a.baseline}"`);
      expect(r.explanation).toMatch(reason);
    }
    expect(judgeCalls).toBe(0);
    // The version is the one attached, whatever the path resolves to now.
    expect(status.scorers.map((s) => s.version)).toEqual([a.version]);
  });
});

it('the real serve, started on the folder after the swap, holds the file to its manifest roots', async () => {
  const a = await attached();
  const copy = join(tmp.dir, 'outside-copy.jsonl');
  writeFileSync(copy, ANSWERS);
  rmSync(a.baseline);
  symlinkSync(copy, a.baseline);
  const server = await serve(['--data-dir', a.dataDir]);
  const rows = (): { explanation: string; failed: number }[] => {
    const store = new Store(join(a.dataDir, 'panoptes.db'), { readonly: true });
    try {
      return store.db.prepare(`SELECT explanation, failed FROM scores ORDER BY seq`).all() as { explanation: string; failed: number }[];
    } finally {
      store.close();
    }
  };
  try {
    for (let i = 0; i < 1000 && rows().length < 4; i++) await new Promise((r) => setTimeout(r, 20));
  } finally {
    server.cli.child.kill('SIGTERM');
    await server.cli.done;
  }
  const stored = rows();
  expect(stored).toHaveLength(4);
  for (const r of stored) {
    expect(r.failed).toBe(1);
    expect(r.explanation).toContain(`the baseline file "${a.baseline}" (the file it names now is outside the folders it may be read from`);
  }
}, 60_000);
