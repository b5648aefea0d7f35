/**
 * Hostile connections on both ports: sockets that connect and then dribble a byte now and then
 * without ever finishing a request or a register. 1,100 of them on the HTTP port and 1,100 on the
 * worker port of the real `panoptes serve` (a process of its own, so the server's file descriptors
 * are its own) must not lock out a client with the token or a worker with the worker token. With a
 * small cap for connections yet to authenticate, the longest-waiting hostile ones are closed to make
 * room, and a client that has authenticated is never among them.
 * Runs on: Node (tests).
 */
import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerListener } from '../../core/remote/listener.js';
import { serve, stopStarted } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';
import { RawPeer, TOKEN as WORKER_TOKEN, registerFrame } from '../remote/harness.js';
import { send, startApi, type ApiHarness } from './harness.js';

const FLOOD = 1100;

/** The soft open-file limit of this process (Linux's /proc/self/limits), or null where there is no such file. */
function openFileLimit(): number | null {
  if (!existsSync('/proc/self/limits')) return null;
  const soft = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
  if (soft === undefined) throw new Error('/proc/self/limits names no "Max open files" limit');
  return soft === 'unlimited' ? Infinity : Number(soft);
}

/** Opens `n` sockets that send `first` and then one more byte every second, and never finish. */
async function flood(port: number, n: number, first: string | Buffer, drip: string | Buffer): Promise<{ sockets: Socket[]; open: () => number; stop: () => void }> {
  const sockets: Socket[] = [];
  for (let i = 0; i < n; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, n - i) }, () =>
        new Promise<void>((resolve) => {
          const s = connect(port, '127.0.0.1', () => {
            s.write(first);
            resolve();
          });
          s.on('error', () => resolve()); // a reset or refusal is the server defending itself
          sockets.push(s);
        }),
      ),
    );
  }
  const timer = setInterval(() => {
    for (const s of sockets) if (s.writable) s.write(drip);
  }, 1000);
  return {
    sockets,
    open: () => sockets.filter((s) => !s.destroyed && s.readyState === 'open').length,
    stop: () => {
      clearInterval(timer);
      for (const s of sockets) s.destroy();
    },
  };
}

/** Waits (bounded) for the closes the server sent to reach this side. */
async function settled(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !done() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
}

/** A worker's register over a fresh connection: resolves with the frame types it got back. */
async function registerOnce(port: number, workerId: string): Promise<string[]> {
  const peer = await RawPeer.connect(port);
  peer.send(registerFrame({ worker_id: workerId, models: 'all' }));
  const deadline = Date.now() + 10_000;
  while (peer.frames.length === 0 && !peer.isClosed() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  peer.socket.destroy();
  return peer.types();
}

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const fileLimit = openFileLimit();
const whyNot =
  fileLimit === null ? 'cannot read the open-file limit: no /proc/self/limits' : fileLimit < 4 * FLOOD ? `the open-file limit ${fileLimit} is below ${4 * FLOOD}; raise it with ulimit -n` : null;
describe.skipIf(whyNot !== null)(`a flood of idle and dribbling connections${whyNot === null ? '' : ` (skipped: ${whyNot})`}`, () => {
  let floods: Array<{ stop: () => void }> = [];
  let api: ApiHarness | undefined;
  afterEach(async () => {
    for (const f of floods.splice(0)) f.stop();
    await stopStarted();
    await api?.close();
    api = undefined;
  });

  it(`serves the token holder and a real worker's register while ${FLOOD} hostile sockets are held on each port`, async () => {
    const s = await serve(['--data-dir', join(tmp.dir, 'data'), '--worker-port', '0', '--worker-token', WORKER_TOKEN], { PANOPTES_TOKEN: '' });
    let workerPort = 0;
    for (const deadline = Date.now() + 10_000; workerPort === 0 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
      workerPort = Number(/listening for workers on 127\.0\.0\.1:(\d+)/.exec(s.stdout())?.[1] ?? 0);
    }
    expect(workerPort).toBeGreaterThan(0);
    const host = `127.0.0.1:${s.port}`;
    const http = await flood(s.port, FLOOD, `GET /runs HTTP/1.1\r\nHost: ${host}\r\n`, 'X');
    const tcp = await flood(workerPort, FLOOD, Buffer.from([0, 0]), Buffer.from([0]));
    floods.push(http, tcp);
    expect(http.open()).toBeGreaterThan(FLOOD * 0.9);
    expect(tcp.open()).toBeGreaterThan(FLOOD * 0.9);

    for (let i = 0; i < 5; i++) {
      const res = await send(s.port, 'GET', '/runs', { headers: { host, authorization: `Bearer ${s.tokenLine}` } });
      expect(res.status).toBe(200);
      expect(await registerOnce(workerPort, `probe-${i}`)).toEqual(['registered']);
    }
  });

  it('closes the longest-waiting connections yet to authenticate past their cap, never an authenticated one', async () => {
    api = await startApi({ startScheduler: false, http: { maxGuestConnections: 50 } });
    // A client that has authenticated keeps its connection open (keep-alive) through the flood.
    const kept = connect(api.port, '127.0.0.1');
    await new Promise<void>((r) => kept.once('connect', () => r()));
    let answers = '';
    kept.on('data', (d: Buffer) => (answers += d.toString()));
    const ask = () => kept.write(`GET /stats HTTP/1.1\r\nHost: 127.0.0.1:${api!.port}\r\nAuthorization: Bearer test-token-0123456789abcdef\r\n\r\n`);
    ask();
    while (!answers.includes('HTTP/1.1 200')) await new Promise((r) => setTimeout(r, 10));

    const hostile = await flood(api.port, 300, `GET /stats HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\n`, 'X');
    floods.push(hostile);
    await settled(() => hostile.open() <= 50);
    expect(hostile.open()).toBeLessThanOrEqual(50);
    // The newest hostile sockets are the ones left: the oldest were closed first.
    expect(hostile.sockets.slice(0, 200).every((sock) => sock.destroyed || sock.readyState !== 'open')).toBe(true);
    answers = '';
    ask();
    while (!answers.includes('HTTP/1.1 200') && !kept.destroyed) await new Promise((r) => setTimeout(r, 10));
    expect(kept.destroyed).toBe(false);
    kept.destroy();
    expect((await api.call('GET', '/stats')).status).toBe(200);
  });

  it('does the same on the worker port: registered workers stay, the oldest unregistered sockets go', async () => {
    api = await startApi({ startScheduler: false });
    const listener = await startWorkerListener(api.engine, { port: 0, token: WORKER_TOKEN, maxGuestConnections: 50 });
    try {
      const worker = await RawPeer.connect(listener.port);
      worker.send(registerFrame({ worker_id: 'steady', models: 'all' }));
      while (worker.frames.length === 0) await new Promise((r) => setTimeout(r, 10));
      const hostile = await flood(listener.port, 300, Buffer.from([0, 0]), Buffer.from([0]));
      floods.push(hostile);
      await settled(() => hostile.open() <= 50);
      expect(hostile.open()).toBeLessThanOrEqual(50);
      expect(worker.isClosed()).toBe(false);
      expect(await registerOnce(listener.port, 'newcomer')).toEqual(['registered']);
      worker.socket.destroy();
    } finally {
      await listener.close();
    }
  });
});
