/**
 * The sweep's ledger, call by call: a call to a billing provider is counted before it is made (a
 * prompt-cache answer too, as its record is), an error taken back out, an
 * abort kept (it may have reached the provider); calls to local models (the mocks) are not counted;
 * tries billed without an answer (empty ones) stay counted, a judge's with their tokens; on a full
 * disk (a real tmpfs, root only) the call is refused before it is made.
 * Real SQLite in a temp folder; the provider behind the client is a stand-in ModelClient, since what
 * is tested is the accounting around it (the kill -9 test in test/scoring/billed-calls-kill9.test.ts
 * runs it against a real server).
 * Runs on: Node (test).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import { PanoptesError } from '../../core/domain.js';
import type { ModelClient, ModelRequest, ModelResponse } from '../../core/models/model-client.js';
import { loadCatalog } from '../../core/service/load-catalog.js';
import { sweepBilling } from '../../core/service/sweep-billing.js';
import { billedClient } from '../../core/scoring/billed-client.js';
import { BilledCalls, sweepUsage, TEMPLATE_JUDGE_SCORER_ID } from '../../core/store/billed-calls.js';
import { Store } from '../../core/store/store.js';
import { writeCountedCatalog } from '../helpers/kill-at-seeded-point.js';
import { tempDir } from '../helpers/temp.js';
import { fillDisk, mountTmpfs, onTmpfs, tmpfsMountable, unmountTmpfs } from '../helpers/tmpfs.js';

let tmp: ReturnType<typeof tempDir>;
let store: Store;
let billed: (client: ModelClient) => ModelClient;
let catalog: ReturnType<typeof loadCatalog>;
beforeEach(() => {
  tmp = tempDir();
  const dataDir = join(tmp.dir, 'data');
  writeStoredRun(dataDir, { runId: 'rsw', vignettes: 2, epochs: 1, models: [{ model: 'cand', accuracy: 0.5 }] });
  store = new Store(join(dataDir, 'panoptes.db'));
  // Ports no server listens on: the stand-in client answers instead.
  catalog = loadCatalog(dataDir, [writeCountedCatalog(join(tmp.dir, 'catalog.json'), 1, 1)]);
  billed = sweepBilling(store, catalog);
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

const request = (model: string, signal?: AbortSignal): ModelRequest => ({
  model,
  messages: [{ role: 'user', content: 'Q?' }],
  sampling: { temperature: 0, maxTokens: 16 },
  privacy: 'strict',
  skipPromptCache: false,
  runId: 'rsw',
  ...(signal ? { signal } : {}),
});
const answer = (cached: boolean): ModelResponse => ({ text: 'A', usage: { inputTokens: 5, outputTokens: 3 }, host: 'cands/c', cached, latencyMs: 1 });

/** A stand-in provider: answers as told, and says what the ledger held when the call was made. */
function provider(outcome: (req: ModelRequest) => ModelResponse | Error): ModelClient & { countedAtCall: number[] } {
  const countedAtCall: number[] = [];
  return {
    countedAtCall,
    serves: () => true,
    generate: async (req) => {
      countedAtCall.push(sweepUsage(store, 'rsw').find((u) => u.model === req.model)?.calls ?? 0);
      const out = outcome(req);
      if (out instanceof Error) throw out;
      return out;
    },
  };
}

describe('the sweep ledger', () => {
  it('counts a call before it is made, a prompt-cache answer too (the records keep tokens and what the cache answered)', async () => {
    const p = provider(() => answer(false));
    await billed(p).generate(request('cand'));
    expect(p.countedAtCall).toEqual([1]);
    await billed(provider(() => answer(true))).generate(request('cand'));
    expect(sweepUsage(store, 'rsw')).toEqual([{ model: 'cand', calls: 2 }]);
  });

  it('counts calls asked in one turn in one commit, each before it is made', async () => {
    const p = provider(() => answer(false));
    const client = billed(p);
    await Promise.all(Array.from({ length: 8 }, () => client.generate(request('cand'))));
    // All eight were counted together, and only then made.
    expect(p.countedAtCall).toEqual(Array.from({ length: 8 }, () => 8));
    expect(sweepUsage(store, 'rsw')).toEqual([{ model: 'cand', calls: 8 }]);
  });

  it('takes an error back out, and keeps an aborted call counted', async () => {
    await expect(billed(provider(() => new PanoptesError('server_error', 'HTTP 500'))).generate(request('cand'))).rejects.toThrow(/HTTP 500/);
    expect(sweepUsage(store, 'rsw')[0]).toMatchObject({ calls: 0 });
    const abort = new AbortController();
    const aborting = provider(() => {
      abort.abort();
      return new PanoptesError('cancelled', 'aborted');
    });
    await expect(billed(aborting).generate(request('cand', abort.signal))).rejects.toThrow(/aborted/);
    expect(sweepUsage(store, 'rsw')[0]).toMatchObject({ calls: 1 });
  });

  it('counts the tries a provider billed without an answer (empty ones), on an answer or on the error', async () => {
    const p = provider(() => ({ ...answer(false), billedBefore: { calls: 1, inputTokens: 11, outputTokens: 7 } }));
    await billed(p).generate(request('cand'));
    expect(sweepUsage(store, 'rsw')).toEqual([{ model: 'cand', calls: 2 }]);
    const emptyEverywhere = provider(() => Object.assign(new PanoptesError('empty_output', 'empty answer', { retryable: true }), { billed: { calls: 2, inputTokens: 22, outputTokens: 14 } }));
    await expect(billed(emptyEverywhere).generate(request('cand'))).rejects.toThrow(/empty answer/);
    expect(sweepUsage(store, 'rsw')).toEqual([{ model: 'cand', calls: 4 }]);
  });

  it('does not count calls to local models: the mocks bill nobody', async () => {
    expect(catalog.hosts('mock-strong').map((h) => h.providerConfig.kind)).toEqual(['mock']);
    const p = provider(() => answer(false));
    await billed(p).generate(request('mock-strong'));
    expect(p.countedAtCall).toEqual([0]);
    expect(sweepUsage(store, 'rsw')).toEqual([]);
  });
});

describe('a judge call answered empty', () => {
  it('stays counted with the tokens it was billed, and a judge answer after an empty try counts both', async () => {
    const judged = (p: ModelClient) =>
      billedClient(p, { ledger: new BilledCalls(store), scorerId: TEMPLATE_JUDGE_SCORER_ID, kind: 'judge', write: (commit) => Promise.resolve((commit(), true)) });
    const usage = () => store.db.prepare(`SELECT calls, input_tokens AS input, output_tokens AS output FROM judge_usage WHERE run_id = 'rsw'`).get();
    const empty = Object.assign(new PanoptesError('empty_output', 'empty answer', { retryable: true }), { billed: { calls: 1, inputTokens: 11, outputTokens: 7 } });
    await expect(judged(provider(() => empty)).generate(request('fj'))).rejects.toThrow(/empty answer/);
    expect(usage()).toEqual({ calls: 1, input: 11, output: 7 });
    await judged(provider(() => ({ ...answer(false), billedBefore: { calls: 1, inputTokens: 11, outputTokens: 7 } }))).generate(request('fj'));
    expect(usage()).toEqual({ calls: 3, input: 27, output: 17 });
  });
});

describe.skipIf(!tmpfsMountable)(onTmpfs('the sweep ledger on a full disk'), () => {
  it('refuses a call it cannot count, naming the database, and never makes it', async () => {
    const full = join(tmp.dir, 'full');
    mkdirSync(full);
    mountTmpfs(full, '8m');
    try {
      writeStoredRun(full, { runId: 'rsw', vignettes: 2, epochs: 1, models: [{ model: 'cand', accuracy: 0.5 }] });
      const onFull = new Store(join(full, 'panoptes.db'));
      try {
        fillDisk(join(full, 'filler'));
        const p = provider(() => answer(false));
        await expect(sweepBilling(onFull, catalog)(p).generate(request('cand'))).rejects.toMatchObject({
          code: 'disk_full',
          message: expect.stringContaining(join(full, 'panoptes.db')),
        });
        expect(p.countedAtCall).toEqual([]);
      } finally {
        onFull.close();
      }
    } finally {
      unmountTmpfs(full);
    }
  });
});
