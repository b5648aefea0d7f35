/**
 * Remote workers: the same 2,000 x 2 x 1 sweep on the 0 ms mock in-process and over 4 local
 * `panoptes worker` processes (calls per second each, and the ratio; target: remote >= 0.8 of
 * in-process); frames per second through one connection (records frames of one record, decoded
 * and validated); and the time from kill -9 of a worker holding a job to that job's redelivery.
 * Runs on: Node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startWorkerListener } from '../core/remote/listener.js';
import { MessageStream } from '../core/remote/message-stream.js';
import { DEFAULT_MAX_FRAME_BYTES, WorkerMessageSchema, type WorkerMessage } from '../core/remote/messages.js';
import { packageRoot } from '../core/paths.js';
import { openEngine, type Engine } from '../core/service/engine.js';
import { initTelemetry } from '../core/telemetry.js';
import { round, writeBenchManifest } from './support.js';

const VIGNETTES = 2000;
const TOKEN = 'bench-token';
const logger = initTelemetry({ defaultLevel: 'warn' });
const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-remote-'));
const catalog = join(dir, 'catalog.json');
const mock = (latencyMs: number) => ({ hosts: [{ provider: 'bench', model: 'm', contextWindow: 1_000_000, options: { latencyMs } }] });
writeFileSync(catalog, JSON.stringify({ providers: { bench: { kind: 'mock', trainsOnData: false } }, models: { a: mock(0), b: mock(0), slow: mock(20) } }));
const manifest = join(dir, 'manifest.jsonl');
await writeBenchManifest(manifest, VIGNETTES);

/** Best calls/s of three runs after a warm-up run. */
async function sweepCallsPerSec(engine: Engine): Promise<number[]> {
  const rates: number[] = [];
  for (let i = 0; i < 4; i++) {
    const t0 = performance.now();
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['a', 'b'], epochs: 1 });
    const final = await engine.scheduler.runToCompletion(run.id);
    if (final.status !== 'done') throw new Error(`run ended ${final.status}: ${final.error}`);
    if (i > 0) rates.push((VIGNETTES * 2) / ((performance.now() - t0) / 1000));
  }
  return rates;
}

// ---- In-process --------------------------------------------------------------------------------
const local = openEngine({ dataDir: join(dir, 'local'), catalogPaths: [catalog], logger });
const inProcess = await sweepCallsPerSec(local);
await local.close();

// ---- Over 4 worker processes -------------------------------------------------------------------
const coord = openEngine({ dataDir: join(dir, 'remote'), catalogPaths: [catalog], local: false, logger });
const listener = await startWorkerListener(coord, { port: 0, token: TOKEN, logger });
let spawned = 0;
const children = new Map<string, ChildProcess>();
function spawnWorker(): string {
  const id = `bench-w${++spawned}`;
  const child = spawn(
    process.execPath,
    [join(packageRoot(), 'bin', 'panoptes.cjs'), 'worker', '--connect', `127.0.0.1:${listener.port}`, '--catalog', catalog,
      '--data-dir', join(dir, id), '--id', id, '--capacity', '2', '--call-concurrency', '8'],
    { env: { ...process.env, PANOPTES_WORKER_TOKEN: TOKEN, PANOPTES_LOG: 'warn' }, stdio: 'ignore' },
  );
  children.set(id, child);
  return id;
}
async function until(predicate: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(1);
  }
}
for (let i = 0; i < 4; i++) spawnWorker();
await until(() => coord.pool.list().length === 4, 'four workers');
const remote = await sweepCallsPerSec(coord);

// ---- Time from kill -9 to redelivery -----------------------------------------------------------
const redeliveryMs: number[] = [];
for (let k = 0; k < 5; k++) {
  const run = await coord.service.createRun({ manifestPath: manifest, models: ['slow'], epochs: 4, concurrency: 4 });
  const done = coord.scheduler.runToCompletion(run.id);
  await until(() => coord.pool.list().some((w) => (w.jobs?.length ?? 0) > 0), 'a job in flight');
  const victim = coord.pool.list().find((w) => (w.jobs?.length ?? 0) > 0)!;
  const held = victim.jobs!.map((j) => ({ jobId: j.jobId, attempt: j.attempt }));
  const t0 = performance.now();
  children.get(victim.id)!.kill('SIGKILL');
  await until(
    () => held.some((h) => { const j = coord.store.queries.getJob(h.jobId)!; return j.attempt > h.attempt && j.workerId !== victim.id; }),
    'the redelivery',
  );
  redeliveryMs.push(performance.now() - t0);
  children.delete(victim.id);
  spawnWorker();
  coord.scheduler.cancel(run.id);
  await done;
  await until(() => coord.pool.list().length === 4, 'four workers again');
}

// ---- Frames per second through one connection --------------------------------------------------
const FRAMES = 100_000;
const server = net.createServer();
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const accepted = once(server, 'connection') as Promise<[net.Socket]>;
const client = net.connect({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
await once(client, 'connect');
const [serverSocket] = await accepted;
let received = 0;
let allReceived!: () => void;
const finished = new Promise<void>((r) => (allReceived = r));
new MessageStream<WorkerMessage>(serverSocket, {
  schema: WorkerMessageSchema,
  maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
  onMessage: () => {
    if (++received === FRAMES) allReceived();
  },
  onClose: () => {},
});
const sender = new MessageStream<WorkerMessage>(client, { schema: WorkerMessageSchema, maxFrameBytes: DEFAULT_MAX_FRAME_BYTES, onMessage: () => {}, onClose: () => {} });
const record = { vignetteIndex: 0, response: 'the model considers evidence carefully and answers that it depends on context. '.repeat(2), usage: { inputTokens: 31, outputTokens: 58 }, latencyMs: 6, host: 'mock/a', cached: false, finishedAt: Date.now() };
const frameBytes = Buffer.byteLength(JSON.stringify({ type: 'records', job_id: 1, attempt: 1, records: [record] })) + 4;
const f0 = performance.now();
for (let i = 0; i < FRAMES; i++) {
  if (!sender.send({ type: 'records', job_id: 1 + (i % 64), attempt: 1, records: [{ ...record, vignetteIndex: i }] })) await once(client, 'drain');
}
await finished;
const frameSecs = (performance.now() - f0) / 1000;
client.destroy();
server.close();

await coord.close();
await listener.close();
for (const c of children.values()) c.kill('SIGKILL');
rmSync(dir, { recursive: true, force: true });

const best = (xs: number[]) => Math.max(...xs);
const sorted = [...redeliveryMs].sort((a, b) => a - b);
console.log(
  JSON.stringify({
    scenario: '2000 x 2 x 1, mock 0 ms; in-process (8 calls in flight) vs 4 worker processes (capacity 2, 8 calls in flight each)',
    in_process_calls_per_sec: round(best(inProcess), 0),
    remote_calls_per_sec: round(best(remote), 0),
    remote_to_in_process: round(best(remote) / best(inProcess)),
    all_in_process_calls_per_sec: inProcess.map((r) => round(r, 0)),
    all_remote_calls_per_sec: remote.map((r) => round(r, 0)),
    frames_per_sec_one_connection: round(FRAMES / frameSecs, 0),
    frame_bytes: frameBytes,
    mb_per_sec_one_connection: round((FRAMES * frameBytes) / frameSecs / 1024 / 1024, 1),
    kill9_to_redelivery_ms: { min: round(sorted[0]!, 0), median: round(sorted[Math.floor(sorted.length / 2)]!, 0), max: round(sorted[sorted.length - 1]!, 0) },
    target_remote_to_in_process: 0.8,
  }),
);
