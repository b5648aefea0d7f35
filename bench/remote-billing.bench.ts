/**
 * What counting a remote worker's billed calls costs (protocol 5): a 1,000 x 2 x 1 sweep through
 * one `panoptes worker` process (capacity 2, 8 calls in flight) to the router benchmark's
 * OpenAI-compatible server at 0 ms, calls/s (best of three after a warm-up); every call is counted
 * by the coordinator before the worker makes it. Then the counting alone, from a hand-driven peer
 * holding a job: one call asked at a time (median and p99 ms from `call_asked` sent to
 * `call_counted` received, a commit each), and 8 asked at once, kept 8 (counted calls/s).
 * Runs on: Node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { startWorkerListener } from '../core/remote/listener.js';
import { MessageStream } from '../core/remote/message-stream.js';
import { CoordinatorMessageSchema, DEFAULT_MAX_FRAME_BYTES, PROTOCOL_VERSION, type CoordinatorMessage } from '../core/remote/messages.js';
import { packageRoot } from '../core/paths.js';
import { openEngine, type Engine } from '../core/service/engine.js';
import { initTelemetry } from '../core/telemetry.js';
import { round, writeBenchManifest } from './support.js';

const VIGNETTES = 1000;
const IN_FLIGHT = 8;
const TOKEN = 'bench-token';
const logger = initTelemetry({ defaultLevel: 'warn' });
const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-remote-billing-'));

// The router benchmark's fake provider, answering at once, in its own process.
const server: ChildProcess = spawn(process.execPath, [join(packageRoot(), 'dist', 'bench', 'router.bench.js'), '--serve', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
// Whatever happens, the children go with this process.
const children: ChildProcess[] = [server];
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
const lines = createInterface({ input: server.stdout! });
const [first] = (await once(lines, 'line')) as [string];
lines.close();
const url = `http://127.0.0.1:${(JSON.parse(first) as { port: number }).port}`;
const catalog = join(dir, 'catalog.json');
const host = (model: string) => ({ hosts: [{ provider: 'fake', model, contextWindow: 128_000, inputPerMTok: 0.15, outputPerMTok: 0.6 }] });
writeFileSync(catalog, JSON.stringify({
  providers: { fake: { kind: 'openai', baseUrl: `${url}/v1`, trainsOnData: false, timeoutMs: 30_000 } },
  models: { a: host('a'), b: host('b'), held: host('held') },
}));
const manifest = join(dir, 'manifest.jsonl');
await writeBenchManifest(manifest, VIGNETTES);

async function until(predicate: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(1);
  }
}

async function sweepCallsPerSec(engine: Engine): Promise<number[]> {
  const rates: number[] = [];
  for (let i = 0; i < 4; i++) {
    const t0 = performance.now();
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['a', 'b'], epochs: 1, skipPromptCache: true });
    const final = await engine.scheduler.runToCompletion(run.id);
    if (final.status !== 'done') throw new Error(`run ended ${final.status}: ${final.error}`);
    if (i > 0) rates.push((VIGNETTES * 2) / ((performance.now() - t0) / 1000));
  }
  return rates;
}

const coord = openEngine({ dataDir: join(dir, 'coordinator'), catalogPaths: [catalog], local: false, logger });
const listener = await startWorkerListener(coord, { port: 0, token: TOKEN, logger });
const worker = spawn(
  process.execPath,
  [join(packageRoot(), 'bin', 'panoptes.cjs'), 'worker', '--connect', `127.0.0.1:${listener.port}`, '--catalog', catalog,
    '--data-dir', join(dir, 'worker'), '--id', 'bench-w', '--capacity', '2', '--call-concurrency', String(IN_FLIGHT), '--models', 'a,b'],
  { env: { ...process.env, PANOPTES_WORKER_TOKEN: TOKEN, PANOPTES_LOG: 'warn' }, stdio: 'ignore' },
);
children.push(worker);
await until(() => coord.pool.list().length === 1, 'the worker');
const sweep = await sweepCallsPerSec(coord);
worker.kill('SIGKILL');
await until(() => coord.pool.list().length === 0, 'the worker gone');

// ---- The counting alone, from a peer holding a job ---------------------------------------------
const socket = net.connect({ host: '127.0.0.1', port: listener.port });
await once(socket, 'connect');
const answered = new Map<number, () => void>();
let assigned: { job_id: number; attempt: number } | null = null;
const peer = new MessageStream<CoordinatorMessage>(socket, {
  schema: CoordinatorMessageSchema,
  maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
  onMessage: (m) => {
    if (m.type === 'assign') assigned = { job_id: m.job_id, attempt: m.attempt };
    if (m.type === 'call_refused') throw new Error(`call ${m.call_id} refused: ${m.error.message}`);
    if (m.type === 'call_counted') answered.get(m.call_id)?.();
  },
  onClose: () => {},
});
peer.send({ type: 'register', protocol: PROTOCOL_VERSION, worker_id: 'bench-peer', capacity: 1, models: ['held'], token: TOKEN, version: 'bench' });
const held = await coord.service.createRun({ manifestPath: manifest, models: ['held'], epochs: 1 });
const heldDone = coord.scheduler.runToCompletion(held.id);
await until(() => assigned !== null, 'the assignment');
const job = assigned!;
let nextId = 1;
const count = (): Promise<void> => {
  const id = nextId++;
  const counted = new Promise<void>((resolve) => answered.set(id, resolve));
  peer.send({ type: 'call_asked', call_id: id, job_id: job.job_id, attempt: job.attempt, kind: 'sweep', model: 'held' });
  // Ended at once: the connection's outstanding calls stay under the cap.
  return counted.then(() => {
    answered.delete(id);
    peer.send({ type: 'call_ended', call_id: id, end: { outcome: 'answered', answer: { usage: { inputTokens: 1, outputTokens: 1 }, cached: false } } });
  });
};
const ONE_AT_A_TIME = 2000;
const roundTrips: number[] = [];
for (let i = 0; i < ONE_AT_A_TIME; i++) {
  const t0 = performance.now();
  await count();
  roundTrips.push(performance.now() - t0);
}
const PIPELINED = 20_000;
const p0 = performance.now();
let started = 0;
await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
  while (started < PIPELINED) {
    started += 1;
    await count();
  }
}));
const pipelinedSecs = (performance.now() - p0) / 1000;
coord.scheduler.cancel(held.id);
await heldDone;
socket.destroy();

await listener.close();
await coord.close();
for (const c of children) c.kill('SIGKILL');
rmSync(dir, { recursive: true, force: true });

const sorted = [...roundTrips].sort((a, b) => a - b);
const best = (xs: number[]) => Math.max(...xs);
console.log(
  JSON.stringify({
    scenario: `${VIGNETTES} x 2 x 1 through one worker (capacity 2, ${IN_FLIGHT} calls in flight) to an OpenAI-compatible server at 0 ms, every call counted first`,
    remote_billed_calls_per_sec: round(best(sweep), 0),
    all_remote_billed_calls_per_sec: sweep.map((r) => round(r, 0)),
    count_round_trip_ms: { median: round(sorted[Math.floor(sorted.length / 2)]!, 3), p99: round(sorted[Math.floor(sorted.length * 0.99)]!, 3) },
    counted_calls_per_sec_8_at_once: round(PIPELINED / pipelinedSecs, 0),
  }),
);
