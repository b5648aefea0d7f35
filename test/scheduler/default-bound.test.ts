/**
 * The default bound on a run's jobs in flight: four, when the run sets none. A fake model client
 * (the only fake: store, scheduler and workers are real) counts the distinct jobs — one per epoch
 * here — with a call open at the same moment; the worker's call bound is set far above, so only the
 * run's job bound can hold them to four. A run that sets its own bound gets that one instead.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { ModelClient, ModelRequest, ModelResponse } from '../../core/models/model-client.js';
import { initTelemetry } from '../../core/telemetry.js';
import { writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { useTempEngines } from '../helpers/temp-engine.js';

initTelemetry({ defaultLevel: 'silent' });

/** Answers after a short wait, noting how many distinct jobs (epochs) have a call open at once. */
class JobCountingClient implements ModelClient {
  private readonly open = new Map<number, number>();
  maxJobs = 0;

  serves(): boolean {
    return true;
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const epoch = request.epoch!;
    this.open.set(epoch, (this.open.get(epoch) ?? 0) + 1);
    this.maxJobs = Math.max(this.maxJobs, this.open.size);
    await sleep(15);
    const left = this.open.get(epoch)! - 1;
    if (left === 0) this.open.delete(epoch);
    else this.open.set(epoch, left);
    return { text: 'four', usage: { inputTokens: 3, outputTokens: 1 }, host: 'fake/counting', cached: false, latencyMs: 15 };
  }
}

describe('jobs in flight', () => {
  const tmp = useTempEngines();

  const sweep = async (concurrency: number | undefined): Promise<{ maxJobs: number; stored: number }> => {
    const client = new JobCountingClient();
    const engine = tmp.open({
      dataDir: join(tmp.dir, `data-${concurrency ?? 'default'}`),
      catalogPaths: [writeMockCatalog(tmp.dir, { counted: {} })],
      modelClient: client,
      callConcurrency: 256,
      tickMs: 20,
    });
    const run = await engine.service.createRun({
      manifestPath: writeManifest(tmp.dir, 6),
      models: ['counted'],
      epochs: 12,
      ...(concurrency === undefined ? {} : { concurrency }),
    });
    const final = await engine.scheduler.runToCompletion(run.id);
    expect(final.status).toBe('done');
    const stored = engine.store.queries.getRun(run.id)!.options.concurrency;
    await engine.close();
    return { maxJobs: client.maxJobs, stored };
  };

  it('is four by default, reached and never passed', async () => {
    expect(await sweep(undefined)).toEqual({ maxJobs: 4, stored: 4 });
  });

  it('is the run\'s own bound when it sets one', async () => {
    expect(await sweep(2)).toEqual({ maxJobs: 2, stored: 2 });
  });
});
