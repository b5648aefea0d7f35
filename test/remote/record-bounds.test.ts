/**
 * Bounds on what a worker may report, over real TCP with an authenticated hand-driven peer: a
 * record whose finish time lies far in the future or before the attempt, whose token counts or
 * latency are absurd, or whose response is over the size limit is refused. The connection closes
 * with a logged reason naming the frame and the field, nothing of that frame lands (not even its
 * good records), the job goes to an honest worker, and the finished run exports through the
 * service and through `GET /runs/:id/responses.jsonl`.
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../core/http/api.js';
import { expectExactlyOnce } from '../helpers/verify.js';
import { send } from '../http/harness.js';
import { RawPeer, registerFrame, startCoordinator, tallyLogger, waitFor, type Coordinator } from './harness.js';

interface AssignFrame {
  type: 'assign';
  job_id: number;
  attempt: number;
  job: { vignettes: Array<{ index: number }> };
}

const HTTP_TOKEN = 'record-bounds-token-0123456789';
const RESPONSE_LIMIT = 1024;
const coordinators: Coordinator[] = [];
const peers: RawPeer[] = [];
afterEach(async () => {
  for (const p of peers.splice(0)) p.socket.destroy();
  for (const c of coordinators.splice(0)) await c.close();
});

async function peer(port: number, id: string): Promise<RawPeer> {
  const p = await RawPeer.connect(port);
  peers.push(p);
  p.send(registerFrame({ worker_id: id, models: ['m'] }));
  await waitFor(() => p.types().includes('registered'), 5000, `${id} registered`);
  return p;
}

const assigns = (p: RawPeer) => p.frames.filter((f) => f.type === 'assign') as unknown as AssignFrame[];

function record(index: number, host: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { vignetteIndex: index, response: `answer ${index}`, usage: { inputTokens: 3, outputTokens: 5 }, latencyMs: 1, host, cached: false, finishedAt: Date.now(), ...overrides };
}

const ABSURD: Array<[string, Record<string, unknown>, RegExp]> = [
  ['a finish time far in the future', { finishedAt: 9e15 }, /"records" frame for job N attempt N: records\.N\.finishedAt N: N ms in the future/],
  ['a finish time long before the attempt', { finishedAt: 1 }, /"records" frame for job N attempt N: records\.N\.finishedAt N: N ms before the attempt started/],
  ['2^53-1 input tokens', { usage: { inputTokens: Number.MAX_SAFE_INTEGER, outputTokens: 5 } }, /invalid "records" frame: records\.N\.usage\.inputTokens: must be at most N/],
  ['negative output tokens', { usage: { inputTokens: 3, outputTokens: -1 } }, /invalid "records" frame: records\.N\.usage\.outputTokens: must not be negative/],
  ['fractional tokens', { usage: { inputTokens: 3.5, outputTokens: 5 } }, /invalid "records" frame: records\.N\.usage\.inputTokens: must be a whole number/],
  ['a latency of 1e300 ms', { latencyMs: 1e300 }, /invalid "records" frame: records\.N\.latencyMs: must be at most N ms/],
  ['a response over the size limit', { response: 'é'.repeat(RESPONSE_LIMIT) }, /"records" frame for job N attempt N: records\.N\.response: N bytes, over the N-byte limit/],
];

describe('bounds on what a worker reports', () => {
  it.each(ABSURD)('refuses %s: the connection closes, nothing of the frame lands, an honest worker finishes, and the run exports', async (_name, bad, reason) => {
    const log = tallyLogger('info');
    const coord = await startCoordinator({ models: { m: {} }, logger: log.logger, listener: { maxResponseBytes: RESPONSE_LIMIT } });
    coordinators.push(coord);
    const rogue = await peer(coord.listener.port, 'rogue');
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(4), models: ['m'], epochs: 1 });
    const done = coord.engine.scheduler.runToCompletion(run.id);
    await waitFor(() => assigns(rogue).length === 1, 5000, 'an assign');
    const a = assigns(rogue)[0]!;
    // A good record first: the bad one after it must keep it from landing too.
    rogue.send({ type: 'records', job_id: a.job_id, attempt: a.attempt, records: [record(0, 'rogue/m'), record(1, 'rogue/m', bad)] });
    await rogue.closed;
    expect(log.count(reason)).toBe(1);

    const honest = await peer(coord.listener.port, 'honest');
    await waitFor(() => assigns(honest).length === 1, 5000, 'the redelivery');
    const b = assigns(honest)[0]!;
    // Nothing landed from the refused frame: the redelivery asks for all four vignettes.
    expect(b.job.vignettes.map((v) => v.index)).toEqual([0, 1, 2, 3]);
    honest.send({ type: 'records', job_id: b.job_id, attempt: b.attempt, records: b.job.vignettes.map((v) => record(v.index, 'honest/m')) });
    honest.send({ type: 'result', job_id: b.job_id, attempt: b.attempt, outcome: { vignettes_done: 4, usage: { inputTokens: 12, outputTokens: 20 } } });
    expect((await done).status).toBe('done');
    expectExactlyOnce(coord.engine.store, coord.dataDir, run.id);
    expect(coord.engine.store.queries.runResults(run.id).map((r) => r.host)).toEqual(Array(4).fill('honest/m'));

    const out = join(coord.dir, 'export.jsonl');
    const exported = await coord.engine.service.exportRun({ runId: run.id, outPath: out, format: 'jsonl' });
    expect(exported.lines).toBe(4);
    expect(readFileSync(out, 'utf8').trimEnd().split('\n')).toHaveLength(4);

    const app = createHttpServer(coord.engine, { token: HTTP_TOKEN });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const port = (app.server.address() as { port: number }).port;
      const res = await send(port, 'GET', `/runs/${run.id}/responses.jsonl`, { headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${HTTP_TOKEN}` } });
      expect(res.status).toBe(200);
      expect(res.text.trimEnd().split('\n').map((l) => (JSON.parse(l) as { host: string }).host)).toEqual(Array(4).fill('honest/m'));
    } finally {
      await app.close();
    }
  });
});
