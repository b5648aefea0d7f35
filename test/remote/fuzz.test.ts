/**
 * Fuzzing the worker listener while two real workers run a sweep: 10,000 random and mutated frames
 * (random bytes, mutated registers, registered sessions sending mutated frames) over thousands of
 * connections, drawn from a seeded generator (PANOPTES_TEST_SEED draws other frames; a failure says
 * its seed). The coordinator stays up, the real workers keep their connections and finish every
 * job exactly once, every bad connection is closed with a logged reason, and the heap is as large
 * afterwards as before. A 0xFFFFFFFF length after registering also closes the connection, on the
 * prefix alone.
 * Runs on: Node (tests).
 */
import net from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../core/remote/messages.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { expectExactlyOnce } from '../helpers/verify.js';
import {
  RawPeer,
  assertBuilt,
  frame,
  registerFrame,
  spawnWorker,
  startCoordinator,
  stopWorkers,
  tallyLogger,
  waitFor,
  type Coordinator,
  type WorkerProcess,
} from './harness.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const log = tallyLogger('info');
let coord: Coordinator;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  coord = await startCoordinator({ models: { fz: { latencyMs: 10, jitterMs: 5 } }, logger: log.logger, listener: { registerTimeoutMs: 1000 } });
  for (const id of ['fz-w1', 'fz-w2']) workers.push(spawnWorker({ id, catalogPath: coord.catalogPath, port: coord.listener.port, models: 'fz', capacity: 2 }));
  await waitFor(() => coord.engine.pool.list().length === 2, 20_000, 'two workers');
});

afterAll(async () => {
  await stopWorkers(workers);
  await coord.close();
});

function mutate(buf: Buffer, rnd: () => number): Buffer {
  const out = Buffer.from(buf);
  switch (Math.floor(rnd() * 5)) {
    case 0: // flip a few bytes, the length prefix included
      for (let i = 0, n = 1 + Math.floor(rnd() * 4); i < n; i++) out[Math.floor(rnd() * out.length)] = Math.floor(rnd() * 256);
      return out;
    case 1: // truncate
      return out.subarray(0, Math.floor(rnd() * out.length));
    case 2: // a body with a lying length
      out.writeUInt32BE(Math.floor(rnd() * 2 ** 32), 0);
      return out;
    case 3: // change one character of the JSON
      out[4 + Math.floor(rnd() * (out.length - 4))] = ' {}[]",:0a\\'.charCodeAt(Math.floor(rnd() * 11));
      return out;
    default: // append garbage
      return Buffer.concat([out, Buffer.from(Array.from({ length: 1 + Math.floor(rnd() * 16) }, () => Math.floor(rnd() * 256)))]);
  }
}

function randomBytes(rnd: () => number): Buffer {
  const body = Buffer.from(Array.from({ length: Math.floor(rnd() * 64) }, () => Math.floor(rnd() * 256)));
  return rnd() < 0.5 ? body : frame(body);
}

function postRegisterFrame(rnd: () => number): Buffer {
  const jobId = 1 + Math.floor(rnd() * 50);
  const usage = { inputTokens: 1, outputTokens: 1 };
  const bodies = [
    { type: 'heartbeat', jobs: [{ job_id: jobId, attempt: 1, vignettes_done: 1, usage }] },
    { type: 'records', job_id: jobId, attempt: 1, records: [{ vignetteIndex: 0, response: 'x', usage, latencyMs: 1, host: 'h', cached: false, finishedAt: 1 }] },
    { type: 'result', job_id: jobId, attempt: 1, outcome: { vignettes_done: 1, usage } },
    { type: 'gave_up', job_id: jobId, attempt: 1, vignette_index: 0, attempts: 6, code: 'server_error', message: '500' },
    { type: 'waiting', job_id: jobId, attempt: 1, wait: { host: 'p/m', since: 1 } },
    { type: 'register', protocol: PROTOCOL_VERSION },
  ];
  const f = frame(bodies[Math.floor(rnd() * bodies.length)]!);
  return rnd() < 0.8 ? mutate(f, rnd) : f;
}

/** One fuzz connection: sends its frames, waits briefly for the close, then hangs up. Returns frames sent. */
async function session(port: number, rnd: () => number, index: number): Promise<number> {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.on('error', () => {});
  socket.on('data', () => {});
  const closed = new Promise<void>((r) => socket.on('close', () => r()));
  await new Promise<void>((r) => socket.once('connect', () => r()).once('error', () => r()));
  const frames: Buffer[] = [];
  const kind = rnd();
  if (kind < 0.35) frames.push(randomBytes(rnd));
  else if (kind < 0.7) frames.push(mutate(frame(registerFrame({ worker_id: `fuzz-${index}`, models: ['fuzz-none'] })), rnd));
  else {
    frames.push(frame(registerFrame({ worker_id: `fuzz-${index}`, models: ['fuzz-none'] })));
    for (let i = 0, n = 1 + Math.floor(rnd() * 6); i < n; i++) frames.push(postRegisterFrame(rnd));
  }
  for (const f of frames) if (!socket.destroyed) socket.write(f);
  await Promise.race([closed, new Promise((r) => setTimeout(r, 40))]);
  socket.destroy();
  await closed;
  return frames.length;
}

async function fuzz(frames: number, rnd: () => number, parallel = 16): Promise<number> {
  let sent = 0;
  let index = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (sent < frames) {
        const n = await session(coord.listener.port, rnd, index++);
        sent += n;
      }
    }),
  );
  return index;
}

describe('fuzzing the listener', () => {
  it('keeps the coordinator up, the real workers working and the heap flat through 10,000 bad frames', async () => {
    const random = seededRandom('fuzzing the listener');
    const rnd = () => random.next();
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(50), models: ['fz'], epochs: 8, concurrency: 4 });
    const done = coord.engine.scheduler.runToCompletion(run.id);

    await fuzz(500, rnd); // warm up: JIT, buffers, logger
    gc();
    const before = process.memoryUsage().heapUsed;
    const sessions = await fuzz(10_000, rnd);
    await waitFor(() => coord.engine.pool.list().length === 2, 5000, 'fuzz sessions to leave the pool');
    const final = await done;
    gc();
    const after = process.memoryUsage().heapUsed;

    expect(final.status, `the run ended: ${final.error}`).toBe('done');
    expectExactlyOnce(coord.engine.store, coord.dataDir, run.id);
    // The real workers never lost their connections.
    for (const w of workers) expect(w.stderr()).not.toMatch(/disconnected from coordinator/);
    expect(log.count(/worker connection lost.*fz-w/)).toBe(0);
    expect(coord.engine.pool.list().map((w) => w.id).sort()).toEqual(['fz-w1', 'fz-w2']);
    // Every bad connection was closed with a reason in the log.
    const closedWithReason = log.count(/^connection closed before registering \| .+/) + log.count(/^worker connection lost \| .+/);
    expect(closedWithReason).toBeGreaterThanOrEqual(sessions * 0.9);
    expect(log.count(/protocol error: frame is not UTF-N JSON/)).toBeGreaterThan(0);
    expect(log.count(/protocol error: invalid "register" frame/)).toBeGreaterThan(0);
    expect(log.count(/exceeds the N-byte limit/)).toBeGreaterThan(0);
    expect(log.count(/which this worker does not hold/)).toBeGreaterThan(0);
    const growthMb = (after - before) / 1024 / 1024;
    expect(growthMb, `heap grew ${growthMb.toFixed(1)} MB over ${sessions} connections`).toBeLessThan(4);
  }, 120_000);

  it('closes a registered connection on a 0xFFFFFFFF length prefix, without waiting for the body', async () => {
    const lostOnLength = /worker connection lost \| protocol error: frame of N bytes exceeds the N-byte limit/;
    const peer = await RawPeer.connect(coord.listener.port);
    peer.send(registerFrame({ worker_id: 'ffff' }));
    await waitFor(() => peer.types().includes('registered'), 5000, 'registration');
    const lostBefore = log.count(lostOnLength);
    peer.socket.write(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    // No byte of the 4 GiB body follows, so the connection can close only on the prefix itself, with
    // its reason logged. The wait bounds a hang; it measures no speed.
    await waitFor(() => peer.isClosed() && log.count(lostOnLength) > lostBefore, 10_000, 'the connection to close on its length prefix');
    expect(log.count(lostOnLength)).toBe(lostBefore + 1);
  });
});
