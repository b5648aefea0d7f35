/**
 * Remote workers' billed calls in the coordinator's ledger (protocol 5). Real `panoptes worker`
 * processes against a coordinator in this process, and a local HTTP server answering like an
 * OpenAI-compatible provider that counts every request it receives:
 * - the sweep calls a worker made equal the stored sweep calls, an error no provider billed taken
 *   back out; calls to a mock model are not counted;
 * - a template judge loop's judge calls on the worker are counted in the run's judge usage;
 * - a worker SIGKILLed mid-run, its job taken over by another: the stored calls are never under
 *   what the provider was asked, and over it by at most the killed worker's call concurrency;
 * - a hand-driven peer's call frames for a job it does not hold, a model its job does not pose, a
 *   judge call without a judge loop, an id asked twice, an end for a call not outstanding: each
 *   refused by name, the connection going on (its job still lands); a protocol-4 worker is
 *   refused at register naming both versions.
 * Runs on: Node (tests).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogData } from '../../core/models/catalog.js';
import { PROTOCOL_VERSION } from '../../core/remote/messages.js';
import { sweepUsage, TEMPLATE_JUDGE_SCORER_ID } from '../../core/store/billed-calls.js';
import { FakeProvider } from '../models/fake-provider.js';
import { refereedTemplate } from '../templates/refereed-template.js';
import {
  RawPeer,
  assertBuilt,
  registerFrame,
  spawnWorker,
  startCoordinator,
  stopWorkers,
  tallyLogger,
  waitFor,
  type Coordinator,
  type WorkerProcess,
} from './harness.js';

const workers: WorkerProcess[] = [];
const coordinators: Coordinator[] = [];
const peers: RawPeer[] = [];
let fake: FakeProvider;
beforeAll(async () => {
  assertBuilt();
  fake = await new FakeProvider().start();
});
afterAll(() => fake.stop());
afterEach(async () => {
  for (const p of peers.splice(0)) p.socket.destroy();
  await stopWorkers(workers.splice(0));
  for (const c of coordinators.splice(0)) await c.close();
});

/** A catalog with `paid` and `referee` on the counting server, and `free` on the mock. */
function catalog(): CatalogData {
  const host = (model: string) => ({ hosts: [{ provider: 'fake', model, contextWindow: 32000, inputPerMTok: 1, outputPerMTok: 2 }] });
  return {
    providers: { fake: { kind: 'openai', baseUrl: `${fake.url}/v1`, trainsOnData: false, timeoutMs: 5000 }, local: { kind: 'mock', trainsOnData: false } },
    models: { paid: host('paid-model'), referee: host('referee-model'), free: { hosts: [{ provider: 'local', model: 'm', contextWindow: 32000 }] } },
  } as CatalogData;
}

async function coordinator(opts: Parameters<typeof startCoordinator>[0] = { models: {}, catalog: catalog() }): Promise<Coordinator> {
  const coord = await startCoordinator(opts);
  coordinators.push(coord);
  return coord;
}

function worker(coord: Coordinator, id: string, callConcurrency = 4): WorkerProcess {
  const w = spawnWorker({ id, catalogPath: coord.catalogPath, port: coord.listener.port, capacity: 2, callConcurrency });
  workers.push(w);
  return w;
}

const sweepCalls = (coord: Coordinator, runId: string) => Object.fromEntries(sweepUsage(coord.engine.store, runId).map((u) => [u.model, u.calls]));

describe("remote workers' billed calls", () => {
  it("counts every sweep call a worker made, an error no provider billed taken back out; a mock model's calls are not counted", async () => {
    fake.always('paid-model', { kind: 'ok', text: 'paid answer', inputTokens: 7, outputTokens: 3 });
    fake.always('referee-model', { kind: 'ok', text: 'another answer', inputTokens: 7, outputTokens: 3 });
    // Two refusals no provider bills.
    fake.next('paid-model', { kind: 'status', status: 400, body: { error: { message: 'bad request' } } }, { kind: 'status', status: 400, body: { error: { message: 'bad request' } } });
    const coord = await coordinator();
    worker(coord, 'payer');
    await waitFor(() => coord.engine.pool.list().length === 1, 15_000, 'the worker to register');
    const before = { paid: fake.count('paid-model'), referee: fake.count('referee-model') };
    // Two billed models of one run at once on the one worker (capacity 2): each call counted for its own job.
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(40), models: ['paid', 'referee', 'free'], epochs: 2, skipPromptCache: true });
    await coord.engine.scheduler.runToCompletion(run.id);
    const asked = { paid: fake.count('paid-model') - before.paid, referee: fake.count('referee-model') - before.referee };
    const stats = await coord.engine.service.stats({ runId: run.id });
    const records = (model: string) => stats.models.find((m) => m.model === model)?.calls;
    expect([records('paid'), records('referee'), records('free')]).toEqual([asked.paid - 2, 80, 80]);
    expect(asked.referee).toBe(80);
    // The two refused calls were taken back out: what stays counted is what the provider billed.
    expect(sweepCalls(coord, run.id)).toEqual({ paid: asked.paid - 2, referee: 80 });
    expect(stats.sweepCalls).toEqual([{ model: 'paid', asked: asked.paid - 2, unrecorded: 0 }, { model: 'referee', asked: 80, unrecorded: 0 }]);
  }, 60_000);

  it("counts a template judge loop's judge calls on the worker in the run's judge usage", async () => {
    fake.always('paid-model', { kind: 'ok', text: 'my answer', inputTokens: 10, outputTokens: 5 });
    fake.always('referee-model', { kind: 'ok', text: '{"reason": "not yet", "score": "fail"}', inputTokens: 20, outputTokens: 4 });
    const coord = await coordinator();
    worker(coord, 'judging');
    await waitFor(() => coord.engine.pool.list().length === 1, 15_000, 'the worker to register');
    const before = fake.count('referee-model');
    const template = refereedTemplate('referee');
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(5), models: ['paid'], epochs: 1, template, skipPromptCache: true });
    expect((await coord.engine.scheduler.runToCompletion(run.id)).status).toBe('done');
    const asked = fake.count('referee-model') - before;
    expect(asked).toBe(5 * 2);
    const judged = coord.engine.store.db
      .prepare(`SELECT judge, calls, input_tokens AS input, output_tokens AS output FROM judge_usage WHERE run_id = ? AND scorer_id = ?`)
      .all(run.id, TEMPLATE_JUDGE_SCORER_ID);
    expect(judged).toEqual([{ judge: 'referee', calls: asked, input: 20 * asked, output: 4 * asked }]);
    const stats = await coord.engine.service.stats({ runId: run.id });
    expect(stats.judges).toEqual([expect.objectContaining({ model: 'referee', calls: asked })]);
    expect(sweepCalls(coord, run.id)).toEqual({ paid: 5 * 2 });
  }, 60_000);

  it('a worker SIGKILLed mid-run, its job taken over: counted >= asked, and over it by at most its call concurrency', async () => {
    const CONCURRENCY = 4;
    fake.always('paid-model', { kind: 'ok', text: 'slow answer', inputTokens: 7, outputTokens: 3, delayMs: 40 });
    const coord = await coordinator({ models: {}, catalog: catalog(), listener: { heartbeatMs: 150 } });
    const doomed = worker(coord, 'doomed', CONCURRENCY);
    await waitFor(() => coord.engine.pool.list().length === 1, 15_000, 'the first worker to register');
    const before = fake.count('paid-model');
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(60), models: ['paid'], epochs: 1, skipPromptCache: true });
    const done = coord.engine.scheduler.runToCompletion(run.id);
    await waitFor(() => fake.count('paid-model') - before >= 20, 20_000, 'twenty calls');
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    worker(coord, 'heir', CONCURRENCY);
    const final = await done;
    expect(final.status).toBe('done');
    const asked = fake.count('paid-model') - before;
    const counted = sweepCalls(coord, run.id).paid ?? 0;
    expect(asked).toBeGreaterThan(60);
    expect(counted).toBeGreaterThanOrEqual(asked);
    expect(counted).toBeLessThanOrEqual(asked + CONCURRENCY);
  }, 60_000);
});

describe('call frames from a hand-driven peer', () => {
  it('refuses by name what the connection does not hold, counts what it does, and the connection goes on', async () => {
    const coord = await coordinator({ models: { held: { latencyMs: 0 } } });
    const p = await RawPeer.connect(coord.listener.port);
    peers.push(p);
    p.send(registerFrame({ worker_id: 'caller', models: ['held'] }));
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(2), models: ['held'], epochs: 1 });
    const done = coord.engine.scheduler.runToCompletion(run.id);
    await waitFor(() => p.types().includes('assign'), 10_000, 'the assignment');
    const assign = p.frames.find((f) => f.type === 'assign') as unknown as { job_id: number; attempt: number };
    const { job_id, attempt } = assign;
    const answers = (id: number) => p.frames.filter((f) => (f.type === 'call_counted' || f.type === 'call_refused') && f.call_id === id);
    const refusal = async (id: number) => {
      await waitFor(() => answers(id).length > 0, 5000, `the answer to call ${id}`);
      const [a] = answers(id);
      expect(a!.type).toBe('call_refused');
      return (a!.error as { message: string }).message;
    };

    p.send({ type: 'call_asked', call_id: 1, job_id: job_id + 100, attempt, kind: 'sweep', model: 'held' });
    expect(await refusal(1)).toBe(`call 1 names job ${job_id + 100} attempt ${attempt}, which this worker does not hold`);
    p.send({ type: 'call_asked', call_id: 2, job_id, attempt: attempt + 1, kind: 'sweep', model: 'held' });
    expect(await refusal(2)).toMatch(/^call 2 names job \d+ attempt \d+, which this worker does not hold$/);
    p.send({ type: 'call_asked', call_id: 3, job_id, attempt, kind: 'sweep', model: 'other' });
    expect(await refusal(3)).toBe(`call 3 is a sweep call to other for job ${job_id}, which poses held`);
    p.send({ type: 'call_asked', call_id: 4, job_id, attempt, kind: 'judge', model: 'held' });
    expect(await refusal(4)).toBe(`call 4 is a judge call for job ${job_id}, whose template has no judge loop`);
    p.send({ type: 'call_ended', call_id: 5, end: { outcome: 'failed' } });
    expect(await refusal(5)).toBe('call 5 is not outstanding on this connection');
    expect(sweepCalls(coord, run.id)).toEqual({});

    // A call for the job it holds is counted; asked again, refused; ended in an error no one billed, taken back out.
    p.send({ type: 'call_asked', call_id: 6, job_id, attempt, kind: 'sweep', model: 'held' });
    await waitFor(() => answers(6).length > 0, 5000, 'the answer to call 6');
    expect(answers(6).map((a) => a.type)).toEqual(['call_counted']);
    expect(sweepCalls(coord, run.id)).toEqual({ held: 1 });
    p.send({ type: 'call_asked', call_id: 6, job_id, attempt, kind: 'sweep', model: 'held' });
    await waitFor(() => answers(6).length > 1, 5000, 'the second answer to call 6');
    expect(answers(6)[1]).toMatchObject({ type: 'call_refused', error: { message: 'call 6 was asked already' } });
    p.send({ type: 'call_asked', call_id: 7, job_id, attempt, kind: 'sweep', model: 'held' });
    await waitFor(() => answers(7).length > 0, 5000, 'the answer to call 7');
    p.send({ type: 'call_ended', call_id: 6, end: { outcome: 'failed' } });
    p.send({ type: 'call_ended', call_id: 7, end: { outcome: 'billed', tries: { calls: 3, inputTokens: 0, outputTokens: 0 } } });
    await waitFor(() => sweepCalls(coord, run.id).held === 3, 5000, 'the ends written');
    // Ended once, a second end is refused.
    p.send({ type: 'call_ended', call_id: 7, end: { outcome: 'aborted' } });
    await waitFor(() => answers(7).length > 1, 5000, 'the second answer to call 7');
    expect(answers(7)[1]).toMatchObject({ type: 'call_refused', error: { message: 'call 7 is not outstanding on this connection' } });

    // None of that closed the connection: the job still lands.
    expect(p.isClosed()).toBe(false);
    const record = (i: number) => ({ vignetteIndex: i, response: `answer ${i}`, usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 1, host: 'peer/held', cached: false, finishedAt: Date.now() });
    p.send({ type: 'records', job_id, attempt, records: [record(0), record(1)] });
    p.send({ type: 'result', job_id, attempt, outcome: { vignettes_done: 2, usage: { inputTokens: 2, outputTokens: 2 } } });
    expect((await done).status).toBe('done');
    expect(coord.engine.store.queries.jobs(run.id).map((j) => j.workerId)).toEqual(['caller']);
  }, 30_000);

  it('refuses more calls outstanding than the cap, and a malformed call frame closes only that connection', async () => {
    const coord = await coordinator({ models: { held: { latencyMs: 0 } } });
    const p = await RawPeer.connect(coord.listener.port);
    peers.push(p);
    p.send(registerFrame({ worker_id: 'flooder', models: ['held'] }));
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(1), models: ['held'], epochs: 1 });
    const done = coord.engine.scheduler.runToCompletion(run.id);
    await waitFor(() => p.types().includes('assign'), 10_000, 'the assignment');
    const { job_id, attempt } = p.frames.find((f) => f.type === 'assign') as unknown as { job_id: number; attempt: number };
    const { MAX_OUTSTANDING_CALLS } = await import('../../core/service/remote-call-ledger.js');
    for (let id = 1; id <= MAX_OUTSTANDING_CALLS + 10; id++) p.send({ type: 'call_asked', call_id: id, job_id, attempt, kind: 'sweep', model: 'held' });
    const answered = () => p.frames.filter((f) => f.type === 'call_counted' || f.type === 'call_refused');
    await waitFor(() => answered().length === MAX_OUTSTANDING_CALLS + 10, 20_000, 'every call answered');
    expect(answered().filter((f) => f.type === 'call_counted')).toHaveLength(MAX_OUTSTANDING_CALLS);
    const refused = answered().filter((f) => f.type === 'call_refused');
    expect(refused).toHaveLength(10);
    expect((refused[0]!.error as { message: string }).message).toBe(`call ${MAX_OUTSTANDING_CALLS + 1} would be over ${MAX_OUTSTANDING_CALLS} calls counted and not ended on this connection`);
    expect(sweepCalls(coord, run.id)).toEqual({ held: MAX_OUTSTANDING_CALLS });

    // Numbers out of bounds are a protocol error: this connection closes, its job goes elsewhere, the calls it had counted stay counted.
    p.send({ type: 'call_ended', call_id: 1, end: { outcome: 'answered', answer: { usage: { inputTokens: -1, outputTokens: 0 }, cached: false } } });
    await waitFor(() => p.isClosed(), 5000, 'the connection to close');
    coord.engine.scheduler.cancel(run.id);
    await done;
    expect(sweepCalls(coord, run.id)).toEqual({ held: MAX_OUTSTANDING_CALLS });
  }, 40_000);

  it('refuses a protocol-4 worker at register, naming both versions', async () => {
    const log = tallyLogger('warn');
    const coord = await coordinator({ models: { held: {} }, logger: log.logger });
    const p = await RawPeer.connect(coord.listener.port);
    peers.push(p);
    p.send(registerFrame({ protocol: 4 }));
    await p.closed;
    expect(PROTOCOL_VERSION).toBe(5);
    expect(p.frames).toEqual([{ type: 'error', code: 'bad_request', message: 'protocol 4 is not supported (this coordinator speaks 5)' }]);
    expect(coord.engine.pool.list()).toEqual([]);
  });
});
