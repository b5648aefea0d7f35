/**
 * The listener's front door, with a run waiting for a worker: a wrong token (same length or not),
 * no token, an empty one, a register that comes too late or not at all, a frame other than
 * register first, a frame over the pre-register limit, a 0xFFFFFFFF length, a foreign protocol
 * version — each is closed with a logged reason, never registered, never sent an assign. The same
 * peer with the right token is registered and assigned the waiting job at once (the control).
 * Runs on: Node (tests).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawPeer, TOKEN, registerFrame, startCoordinator, tallyLogger, waitFor, type Coordinator } from './harness.js';

let coord: Coordinator;
const log = tallyLogger('info');
let runDone: Promise<unknown>;

beforeAll(async () => {
  coord = await startCoordinator({
    models: { 'auth-a': { latencyMs: 5 } },
    logger: log.logger,
    listener: { registerTimeoutMs: 400 },
    waitForWorkerMs: 60_000,
  });
  const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(3), models: ['auth-a'], epochs: 1 });
  runDone = coord.engine.scheduler.runToCompletion(run.id);
});

afterAll(async () => {
  await coord.close();
  await runDone.catch(() => undefined);
});

/** Connects, sends what `act` sends, waits for the close; returns the frames received and how long it took. */
async function refused(act: (p: RawPeer) => Promise<void> | void): Promise<{ types: string[]; ms: number }> {
  const peer = await RawPeer.connect(coord.listener.port);
  await act(peer);
  const ms = await peer.closed;
  return { types: peer.types(), ms };
}

describe('the listener refuses', () => {
  it.each([
    ['a wrong token of the same length', { token: TOKEN.replace(/.$/, 'X') }],
    ['a wrong token of another length', { token: 'x' }],
    ['a very long token', { token: 'y'.repeat(1000) }],
    ['an empty token', { token: '' }],
  ])('%s: error frame, closed, no assign', async (_name, override) => {
    const { types } = await refused((p) => p.send(registerFrame({ worker_id: 'bad-token', models: ['auth-a'], ...override })));
    expect(types).toEqual(['error']);
    expect(coord.engine.pool.list()).toEqual([]);
  });

  it('a register with no token at all: closed as an invalid frame, no assign', async () => {
    const { token: _omitted, ...noToken } = registerFrame({ worker_id: 'no-token', models: ['auth-a'] });
    const { types } = await refused((p) => p.send(noToken));
    expect(types).toEqual([]);
    expect(log.count(/closed before registering \| protocol error: invalid "register" frame: token/)).toBeGreaterThanOrEqual(1);
  });

  it('a connection that never registers: closed after the register timeout', async () => {
    const { types, ms } = await refused(() => {});
    expect(types).toEqual([]);
    expect(ms).toBeGreaterThanOrEqual(350);
    expect(ms).toBeLessThan(3000);
    expect(log.count(/no register within N ms/)).toBeGreaterThanOrEqual(1);
  });

  it('a register that comes too late: already closed, never registered', async () => {
    const peer = await RawPeer.connect(coord.listener.port);
    await new Promise((r) => setTimeout(r, 700));
    peer.send(registerFrame({ worker_id: 'slow', models: ['auth-a'] }));
    await peer.closed;
    expect(peer.types()).toEqual([]);
    expect(coord.engine.pool.list()).toEqual([]);
  });

  it('a frame other than register first', async () => {
    const { types } = await refused((p) => p.send({ type: 'heartbeat' }));
    expect(types).toEqual([]);
    expect(log.count(/invalid "heartbeat" frame/)).toBeGreaterThanOrEqual(1);
  });

  it('a first frame over the 4 KiB pre-register limit, at once', async () => {
    const { types, ms } = await refused((p) => p.send(registerFrame({ version: 'v'.repeat(5000) })));
    expect(types).toEqual([]);
    expect(ms).toBeLessThan(350);
    expect(log.count(/frame of N bytes exceeds the N-byte limit/)).toBeGreaterThanOrEqual(1);
  });

  it('a length prefix of 0xFFFFFFFF, at once', async () => {
    const { types, ms } = await refused((p) => void p.socket.write(Buffer.from([0xff, 0xff, 0xff, 0xff])));
    expect(types).toEqual([]);
    expect(ms).toBeLessThan(350);
    expect(log.tally.get('connection closed before registering | protocol error: frame of N bytes exceeds the N-byte limit')).toBeGreaterThanOrEqual(2);
  });

  it('a worker speaking another protocol version', async () => {
    const { types } = await refused((p) => p.send(registerFrame({ protocol: 99, models: ['auth-a'] })));
    expect(types).toEqual(['error']);
    expect(log.count(/refused: protocol N is not supported/)).toBe(1);
  });

  it('and after all of that, the right token is registered and assigned the waiting job', async () => {
    expect(log.count(/refused: invalid worker token/)).toBe(4);
    expect(coord.engine.pool.list()).toEqual([]);
    const peer = await RawPeer.connect(coord.listener.port);
    peer.send(registerFrame({ worker_id: 'good', models: ['auth-a'] }));
    await waitFor(() => peer.types().includes('assign'), 5000, 'an assign for the good worker');
    expect(peer.types().slice(0, 2)).toEqual(['registered', 'assign']);
    expect(coord.engine.pool.list()).toMatchObject([{ id: 'good', kind: 'remote', capacity: 1, inFlight: 1, version: 'test', alive: true }]);
    expect(coord.engine.pool.list()[0]!.address).toMatch(/^127\.0\.0\.1:\d+$/);
    peer.socket.destroy();
    await waitFor(() => coord.engine.pool.list().length === 0, 5000, 'the lost worker to leave the pool');
  });
});
