/**
 * Each record's cost over HTTP: `GET /runs/:id/responses` prices every call at the run's kept
 * prices (a cached call at $0, with what it saved), the same whether the engine that serves it
 * has the run's catalog or none, and the calls of a run sum to its `/runs/:id/stats` to the cent.
 * Runs on: Node (tests).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../core/http/api.js';
import type { PricedResponse } from '../../core/service/contract.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { tempDir, writeManifest } from '../helpers/temp.js';
import { send } from './harness.js';

const TOKEN = 'record-costs-token-0123456789';

interface Served {
  engine: Engine;
  get(path: string): Promise<any>;
  close(): Promise<void>;
}

async function serve(dataDir: string, catalogPaths: string[]): Promise<Served> {
  const engine = openEngine({ dataDir, catalogPaths, tickMs: 20 });
  const app = createHttpServer(engine, { token: TOKEN });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    engine,
    async get(path) {
      const res = await send(port, 'GET', path, { headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${TOKEN}` } });
      expect(res.status, res.text).toBe(200);
      return res.json;
    },
    async close() {
      await app.close();
      await engine.close();
    },
  };
}

/** Every record of a run, page by page as a client reads them. */
async function allRecords(s: Served, runId: string): Promise<PricedResponse[]> {
  const items: PricedResponse[] = [];
  let cursor: number | null = null;
  do {
    const page = (await s.get(`/runs/${runId}/responses?limit=37${cursor === null ? '' : `&cursor=${cursor}`}`)) as { items: PricedResponse[]; nextCursor: number | null };
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return items;
}

const cents = (usd: number) => Math.round(usd * 100);

describe('each call has its cost', () => {
  const tmp = tempDir();
  const dataDir = join(tmp.dir, 'data');
  const catalog = join(tmp.dir, 'priced.json');
  const runs: string[] = [];
  const atRunTime = new Map<string, PricedResponse[]>();

  beforeAll(async () => {
    // Prices high enough that a run costs dollars, so "to the cent" compares something.
    writeFileSync(
      catalog,
      JSON.stringify({
        providers: { mockpriced: { kind: 'mock', trainsOnData: false } },
        models: {
          'priced-a': { hosts: [{ provider: 'mockpriced', model: 'priced-a', contextWindow: 100_000, inputPerMTok: 3100, outputPerMTok: 17_000, options: { latencyMs: 0 } }] },
          'priced-b': { hosts: [{ provider: 'mockpriced', model: 'priced-b', contextWindow: 100_000, inputPerMTok: 250, outputPerMTok: 1250, options: { latencyMs: 0 } }] },
        },
      }),
    );
    const manifest = writeManifest(tmp.dir, 60);
    const s = await serve(dataDir, [catalog]);
    try {
      // The second run is answered from the first one's cache: its calls cost nothing and save what the first paid.
      for (let i = 0; i < 2; i++) {
        const run = await s.engine.service.createRun({ manifestPath: manifest, models: ['priced-a', 'priced-b'], epochs: 2 });
        const final = await s.engine.scheduler.runToCompletion(run.id);
        expect(final.status).toBe('done');
        runs.push(run.id);
        atRunTime.set(run.id, await allRecords(s, run.id));
      }
    } finally {
      await s.close();
    }
  });
  afterAll(() => tmp.cleanup());

  it('prices billed calls at their tokens and cached calls at $0 with their saving', () => {
    const [billed, cached] = runs.map((id) => atRunTime.get(id)!);
    expect(billed).toHaveLength(240);
    expect(cached).toHaveLength(240);
    for (const r of billed!) {
      const price = r.model === 'priced-a' ? { in: 3100, out: 17_000 } : { in: 250, out: 1250 };
      expect(r.cached).toBe(false);
      expect(r.estCostUsd).toBeCloseTo((r.usage.inputTokens * price.in + r.usage.outputTokens * price.out) / 1e6, 12);
      expect(r.savedCostUsd).toBe(0);
    }
    const paid = new Map(billed!.map((r) => [`${r.model}|${r.epoch}|${r.vignetteId}`, r.estCostUsd]));
    for (const r of cached!) {
      expect(r.cached).toBe(true);
      expect(r.estCostUsd).toBe(0);
      expect(r.savedCostUsd).toBeCloseTo(paid.get(`${r.model}|${r.epoch}|${r.vignetteId}`)!, 12);
    }
  });

  it('reads the same costs without the run\'s catalog, and they sum to the run\'s stats to the cent', async () => {
    const s = await serve(dataDir, []);
    try {
      expect(s.engine.catalog.has('priced-a')).toBe(false);
      for (const runId of runs) {
        const records = await allRecords(s, runId);
        expect(records.map((r) => [r.seq, r.estCostUsd, r.savedCostUsd])).toEqual(
          atRunTime.get(runId)!.map((r) => [r.seq, r.estCostUsd, r.savedCostUsd]),
        );
        const stats = (await s.get(`/runs/${runId}/stats`)) as {
          total_est_cost_usd: number;
          saved_cost_usd: number;
          models: Array<{ model: string; est_cost_usd: number; saved_cost_usd: number }>;
        };
        const sum = (pick: (r: PricedResponse) => number, model?: string) =>
          records.filter((r) => model === undefined || r.model === model).reduce((t, r) => t + pick(r), 0);
        expect(cents(sum((r) => r.estCostUsd))).toBe(cents(stats.total_est_cost_usd));
        expect(cents(sum((r) => r.savedCostUsd))).toBe(cents(stats.saved_cost_usd));
        for (const m of stats.models) {
          expect(cents(sum((r) => r.estCostUsd, m.model))).toBe(cents(m.est_cost_usd));
          expect(cents(sum((r) => r.savedCostUsd, m.model))).toBe(cents(m.saved_cost_usd));
        }
      }
      // Dollars, not fractions of a cent: the comparison above has something to compare.
      expect((await s.get(`/runs/${runs[0]}/stats`)).total_est_cost_usd).toBeGreaterThan(1);
    } finally {
      await s.close();
    }
  });
});
