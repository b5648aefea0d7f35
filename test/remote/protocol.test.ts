/**
 * The RemoteWorker actor seen from the wire, with a hand-driven peer: a job too large for one frame
 * arrives as assign + assign_more frames, each under the limit; records and the result are matched
 * by job id AND attempt (a result for another attempt, records for an unknown job or a vignette the
 * job lacks close the connection, and the job goes to the next worker); capacity holds; heartbeat
 * progress reaches WorkerInfo; a job's wait for a down host shows while its worker says so and
 * clears when the worker is gone; a give-up for a vignette the job lacks, or an oversized wait,
 * closes the connection; after a cancel the peer's late records and result are ignored,
 * not treated as a protocol error.
 * Runs on: Node (tests).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectExactlyOnce } from '../helpers/verify.js';
import { RawPeer, registerFrame, startCoordinator, tallyLogger, waitFor, type Coordinator } from './harness.js';

type Frame = RawPeer['frames'][number];
interface AssignFrame {
  type: 'assign';
  job_id: number;
  attempt: number;
  job: { vignetteCount: number; vignettes: Array<{ index: number; id: string }> };
  more: boolean;
}

const coordinators: Coordinator[] = [];
const peers: RawPeer[] = [];
afterEach(async () => {
  for (const p of peers.splice(0)) p.socket.destroy();
  for (const c of coordinators.splice(0)) await c.close();
});

async function peer(port: number, reg: Record<string, unknown>): Promise<RawPeer> {
  const p = await RawPeer.connect(port);
  peers.push(p);
  p.send(registerFrame(reg));
  await waitFor(() => p.types().includes('registered') || p.isClosed(), 5000, 'registration');
  return p;
}

function assigns(p: RawPeer): AssignFrame[] {
  return p.frames.filter((f): f is Frame & AssignFrame => f.type === 'assign');
}

function record(index: number): Record<string, unknown> {
  return { vignetteIndex: index, response: `answer ${index}`, usage: { inputTokens: 3, outputTokens: 5 }, latencyMs: 1, host: 'peer/model', cached: false, finishedAt: Date.now() };
}

/** Answers a job fully: its records in batches of 50, then the result. */
function answer(p: RawPeer, jobId: number, attempt: number, indexes: number[]): void {
  for (let i = 0; i < indexes.length; i += 50) p.send({ type: 'records', job_id: jobId, attempt, records: indexes.slice(i, i + 50).map(record) });
  p.send({ type: 'result', job_id: jobId, attempt, outcome: { vignettes_done: indexes.length, usage: { inputTokens: 3 * indexes.length, outputTokens: 5 * indexes.length } } });
}

describe('the RemoteWorker actor', () => {
  it('splits a large job over frames under the limit and lands the answers exactly once', async () => {
    const coord = await startCoordinator({ models: { big: {} }, listener: { maxFrameBytes: 16 * 1024 } });
    coordinators.push(coord);
    const manifest = join(coord.dir, 'big.jsonl');
    writeFileSync(manifest, Array.from({ length: 300 }, (_, i) => JSON.stringify({ id: `b${i}`, prompt: `${i} `.repeat(400) })).join('\n') + '\n');
    const p = await peer(coord.listener.port, { worker_id: 'big-peer', models: ['big'] });
    const run = await coord.engine.service.createRun({ manifestPath: manifest, models: ['big'], epochs: 1 });
    const done = coord.engine.scheduler.runToCompletion(run.id);
    await waitFor(() => p.frames.some((f) => (f.type === 'assign' || f.type === 'assign_more') && f.more === false), 10_000, 'the whole job');
    const parts = p.frames.filter((f) => f.type === 'assign' || f.type === 'assign_more');
    const sizes = parts.map((f) => Buffer.byteLength(JSON.stringify(f)));
    expect(parts.length).toBeGreaterThan(10);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(16 * 1024);
    const first = parts[0] as unknown as AssignFrame;
    const vignettes = [...first.job.vignettes, ...parts.slice(1).flatMap((f) => f.vignettes as Array<{ index: number; id: string }>)];
    expect(first.job.vignetteCount).toBe(300);
    expect(vignettes.map((v) => v.id)).toEqual(Array.from({ length: 300 }, (_, i) => `b${i}`));
    answer(p, first.job_id, first.attempt, vignettes.map((v) => v.index));
    const final = await done;
    expect(final.status).toBe('done');
    expectExactlyOnce(coord.engine.store, coord.dataDir, run.id);
    expect(coord.engine.store.queries.runResults(run.id)[0]!.prompt).toBe('0 '.repeat(400));
  });

  it.each([
    ['a result for another attempt', (a: AssignFrame) => ({ type: 'result', job_id: a.job_id, attempt: a.attempt + 1, outcome: { vignettes_done: 0, usage: { inputTokens: 0, outputTokens: 0 } } }), /result for job N attempt N, which this worker does not hold/],
    ['records for an unknown job', (a: AssignFrame) => ({ type: 'records', job_id: a.job_id + 1000, attempt: a.attempt, records: [record(0)] }), /records for job N attempt N, which this worker does not hold/],
    ['a record for a vignette the job lacks', (a: AssignFrame) => ({ type: 'records', job_id: a.job_id, attempt: a.attempt, records: [record(999)] }), /record for vignette index N, which job N does not contain/],
    ['a give-up for a vignette the job lacks', (a: AssignFrame) => ({ type: 'gave_up', job_id: a.job_id, attempt: a.attempt, vignette_index: 999, attempts: 6, code: 'server_error', message: '500' }), /gave_up for vignette index N, which job N does not contain/],
    ['a wait for a host name over 400 characters', (a: AssignFrame) => ({ type: 'waiting', job_id: a.job_id, attempt: a.attempt, wait: { host: 'h'.repeat(401), since: 1 } }), /invalid "waiting" frame/],
  ])('closes the connection on %s, and the job goes to the next worker', async (_name, bad, reason) => {
    const log = tallyLogger('info');
    const coord = await startCoordinator({ models: { m: {} }, logger: log.logger });
    coordinators.push(coord);
    const rogue = await peer(coord.listener.port, { worker_id: 'rogue', models: ['m'] });
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(4), models: ['m'], epochs: 1 });
    const done = coord.engine.scheduler.runToCompletion(run.id);
    await waitFor(() => assigns(rogue).length === 1, 5000, 'an assign');
    const a = assigns(rogue)[0]!;
    rogue.send(bad(a));
    await rogue.closed;
    expect(log.count(reason)).toBe(1);
    const honest = await peer(coord.listener.port, { worker_id: 'honest', models: ['m'] });
    await waitFor(() => assigns(honest).length === 1, 5000, 'the redelivery');
    const b = assigns(honest)[0]!;
    expect([b.job_id, b.attempt]).toEqual([a.job_id, a.attempt + 1]);
    answer(honest, b.job_id, b.attempt, b.job.vignettes.map((v) => v.index));
    expect((await done).status).toBe('done');
    expectExactlyOnce(coord.engine.store, coord.dataDir, run.id);
  });

  it('shows a job waiting for host while its worker says so, and not once the worker is gone', async () => {
    const coord = await startCoordinator({ models: { m: {} } });
    coordinators.push(coord);
    const gone = await peer(coord.listener.port, { worker_id: 'waits-then-goes', models: ['m'] });
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(4), models: ['m'], epochs: 1 });
    const done = coord.engine.scheduler.runToCompletion(run.id);
    await waitFor(() => assigns(gone).length === 1, 5000, 'an assign');
    const a = assigns(gone)[0]!;
    gone.send({ type: 'waiting', job_id: a.job_id, attempt: a.attempt, wait: { host: 'down/m', since: 1234 } });
    await waitFor(() => coord.engine.store.queries.waitingForHost(run.id) !== null, 5000, 'waiting for host');
    expect((await coord.engine.service.getRun({ runId: run.id })).run.waitingForHost).toEqual({ host: 'down/m', since: 1234 });
    gone.socket.destroy();
    await waitFor(() => coord.engine.store.queries.waitingForHost(run.id) === null, 5000, 'the wait to clear');
    const honest = await peer(coord.listener.port, { worker_id: 'honest', models: ['m'] });
    await waitFor(() => assigns(honest).length === 1, 5000, 'the redelivery');
    const b = assigns(honest)[0]!;
    answer(honest, b.job_id, b.attempt, b.job.vignettes.map((v) => v.index));
    expect((await done).status).toBe('done');
    expect((await coord.engine.service.getRun({ runId: run.id })).run.waitingForHost).toBeNull();
  });

  it('never assigns more than the declared capacity, and reports heartbeat progress', async () => {
    const coord = await startCoordinator({ models: { m: {} } });
    coordinators.push(coord);
    const p = await peer(coord.listener.port, { worker_id: 'two-slots', capacity: 2, models: ['m'] });
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(3), models: ['m'], epochs: 5, concurrency: 5 });
    const done = coord.engine.scheduler.runToCompletion(run.id);
    await waitFor(() => assigns(p).length === 2, 5000, 'two assigns');
    await new Promise((r) => setTimeout(r, 300));
    expect(assigns(p)).toHaveLength(2);
    const [first] = assigns(p);
    p.send({ type: 'records', job_id: first!.job_id, attempt: first!.attempt, records: [record(0)] });
    p.send({ type: 'heartbeat', jobs: [{ job_id: first!.job_id, attempt: first!.attempt, vignettes_done: 1, usage: { inputTokens: 3, outputTokens: 5 } }] });
    await waitFor(() => (coord.engine.pool.list()[0]?.jobs ?? []).some((j) => j.vignettesDone === 1), 5000, 'progress in WorkerInfo');
    expect(coord.engine.pool.list()[0]!.jobs!.find((j) => j.jobId === first!.job_id)).toMatchObject({ attempt: 1, vignetteCount: 3, vignettesDone: 1, model: 'm' });
    let answered = 0;
    while (answered < 5) {
      await waitFor(() => assigns(p).length > answered, 5000, `assign ${answered + 1}`);
      const a = assigns(p)[answered]!;
      answer(p, a.job_id, a.attempt, a.job.vignettes.map((v) => v.index));
      answered += 1;
      // Each result frees exactly one slot: never more than 2 assigned and unanswered.
      expect(assigns(p).length - answered).toBeLessThanOrEqual(2);
    }
    expect((await done).status).toBe('done');
    expectExactlyOnce(coord.engine.store, coord.dataDir, run.id);
  });

  it('sends cancel when a run is cancelled and ignores the late records and result that cross it', async () => {
    const log = tallyLogger('info');
    const coord = await startCoordinator({ models: { m: {} }, logger: log.logger });
    coordinators.push(coord);
    const p = await peer(coord.listener.port, { worker_id: 'late', models: ['m'] });
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(4), models: ['m'], epochs: 1 });
    const done = coord.engine.scheduler.runToCompletion(run.id);
    await waitFor(() => assigns(p).length === 1, 5000, 'an assign');
    const a = assigns(p)[0]!;
    coord.engine.scheduler.cancel(run.id);
    await waitFor(() => p.types().includes('cancel'), 5000, 'a cancel frame');
    expect(p.frames.find((f) => f.type === 'cancel')).toEqual({ type: 'cancel', job_id: a.job_id, attempt: a.attempt });
    answer(p, a.job_id, a.attempt, a.job.vignettes.map((v) => v.index));
    p.send({ type: 'heartbeat' });
    expect((await done).status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 200));
    expect(p.isClosed()).toBe(false);
    expect(coord.engine.store.queries.responseCount(run.id)).toBe(0);
    expect(coord.engine.pool.list()[0]).toMatchObject({ id: 'late', alive: true, inFlight: 0 });
    expect(log.count(/worker connection lost/)).toBe(0);
  });
});
