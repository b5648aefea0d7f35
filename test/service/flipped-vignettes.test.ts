/**
 * Flipped vignettes between two runs, on a real engine: the same vignette ids posed to
 * mock-strong and mock-weak over three epochs in run A and run B, run B's targets changed for some
 * vignettes, scored by an exact-match rule. Each model's pass-to-fail and fail-to-pass lists are
 * checked against the majority verdicts computed here from the raw score rows, over the contract
 * and over HTTP; a scorer a run lacks, or a run that does not exist, is refused naming the field.
 * Runs on: Node (tests).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../core/http/api.js';
import type { FlippedVignettes } from '../../core/service/contract.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { tempDir } from '../helpers/temp.js';
import { send } from '../http/harness.js';

const N = 30;
const MODELS = ['mock-strong', 'mock-weak'];
let tmp: ReturnType<typeof tempDir>;
let engine: Engine;
let runA: string;
let runB: string;

function manifest(name: string, shift: number): string {
  const path = join(tmp.dir, name);
  const lines = Array.from({ length: N }, (_, i) =>
    JSON.stringify({ id: `q${i}`, prompt: `Which option is right for question ${i}?`, target: 'ABCDE'[(i + (i % 3 === 0 ? shift : 0)) % 5] }),
  );
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

async function scoredRun(path: string): Promise<string> {
  const run = await engine.service.createRun({ manifestPath: path, models: MODELS, epochs: 3, scorers: { scorers: [{ name: 'exact', type: 'match' }] } });
  await engine.scheduler.runToCompletion(run.id);
  await engine.scoring.finish(run.id);
  return run.id;
}

/** "vignette|model" -> majority verdict, from the score rows. */
function verdicts(runId: string): Map<string, boolean> {
  const rows = engine.store.db
    .prepare(
      `SELECT v.vignette_id AS id, j.model, SUM(sc.passed) AS passes, COUNT(*) AS n FROM scores sc JOIN responses r ON r.seq = sc.seq
       JOIN jobs j ON j.id = r.job_id JOIN vignettes v ON v.run_id = j.run_id AND v.idx = r.vignette_idx
       WHERE j.run_id = ? AND sc.failed = 0 GROUP BY v.vignette_id, j.model`,
    )
    .all(runId) as Array<{ id: string; model: string; passes: number; n: number }>;
  return new Map(rows.map((r) => [`${r.id}|${r.model}`, r.passes * 2 > r.n]));
}

beforeAll(async () => {
  tmp = tempDir();
  engine = openEngine({ dataDir: join(tmp.dir, 'data'), tickMs: 20 });
  engine.scoring.start();
  runA = await scoredRun(manifest('a.jsonl', 0));
  runB = await scoredRun(manifest('b.jsonl', 1));
});
afterAll(async () => {
  await engine.close();
  tmp.cleanup();
});

describe('flipped vignettes', () => {
  it('lists, per model, the vignettes whose majority verdict changed, each way', async () => {
    const result = await engine.service.flippedVignettes({ runA, runB });
    const a = verdicts(runA);
    const b = verdicts(runB);
    expect(result.scorer).toBe('exact');
    expect(result.models.map((m) => m.model)).toEqual(MODELS);
    let flips = 0;
    for (const m of result.models) {
      const ids = Array.from({ length: N }, (_, i) => `q${i}`);
      const toFail = ids.filter((id) => a.get(`${id}|${m.model}`) === true && b.get(`${id}|${m.model}`) === false);
      const toPass = ids.filter((id) => a.get(`${id}|${m.model}`) === false && b.get(`${id}|${m.model}`) === true);
      expect(m.passToFail).toEqual(toFail);
      expect(m.failToPass).toEqual(toPass);
      expect([m.passToFailCount, m.failToPassCount, m.compared]).toEqual([toFail.length, toPass.length, N]);
      flips += toFail.length + toPass.length;
    }
    expect(flips, 'changed targets flip some verdicts').toBeGreaterThan(0);
    const limited = await engine.service.flippedVignettes({ runA, runB, limit: 1 });
    for (const m of limited.models) expect(m.passToFail.length).toBeLessThanOrEqual(1);
    expect(limited.models.map((m) => m.passToFailCount)).toEqual(result.models.map((m) => m.passToFailCount));
  });

  it('refuses a scorer a run does not have, naming the field', async () => {
    await expect(engine.service.flippedVignettes({ runA, runB, scorer: 'nope' })).rejects.toMatchObject({ where: 'scorer' });
    await expect(engine.service.flippedVignettes({ runA, runB: 'nope' })).rejects.toMatchObject({ code: 'not_found', where: 'runB' });
  });

  it('serves the same lists over HTTP', async () => {
    const app = createHttpServer(engine, { token: 'flips-token-0123456789abcdef' });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const address = app.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      const res = await send(port, 'GET', `/runs/${runA}/flips/${runB}?scorer=exact`, {
        headers: { host: `127.0.0.1:${port}`, authorization: 'Bearer flips-token-0123456789abcdef' },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.json as FlippedVignettes).toEqual(await engine.service.flippedVignettes({ runA, runB, scorer: 'exact' }));
    } finally {
      await app.close();
    }
  });
});
