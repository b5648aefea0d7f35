/**
 * MessageStream and FrameBatcher over a real socket pair: frames survive any chunking; a bad
 * length, an empty or truncated frame, invalid UTF-8 or JSON, a frame the schema refuses and a
 * handler that rejects each close the connection once, with a reason; sending over the limit
 * throws; batches respect both the count and the byte budget.
 * Runs on: Node (tests).
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameBatcher, budgetFor, jsonBytes } from '../../core/remote/frame-batcher.js';
import { MessageStream } from '../../core/remote/message-stream.js';
import { frame } from './harness.js';

const Ping = z.object({ type: z.literal('ping'), n: z.number().int(), pad: z.string().optional() }).strict();
type Ping = z.infer<typeof Ping>;

interface Pair {
  client: net.Socket;
  stream: MessageStream<Ping>;
  received: Ping[];
  closed: Promise<string>;
  server: net.Server;
}

const open: Pair[] = [];
afterEach(async () => {
  for (const p of open.splice(0)) {
    p.client.destroy();
    await new Promise((r) => p.server.close(r));
  }
});

async function pair(opts: { maxFrameBytes?: number; onMessage?: (m: Ping) => void } = {}): Promise<Pair> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
  const client = net.connect({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
  client.on('error', () => {});
  const socket = await accepted;
  const received: Ping[] = [];
  let closedWith!: (reason: string) => void;
  const closed = new Promise<string>((r) => (closedWith = r));
  const stream = new MessageStream<Ping>(socket, {
    schema: Ping,
    maxFrameBytes: opts.maxFrameBytes ?? 1024,
    onMessage: (m) => {
      received.push(m);
      opts.onMessage?.(m);
    },
    onClose: (reason) => closedWith(reason),
  });
  const p = { client, stream, received, closed, server };
  open.push(p);
  return p;
}

describe('MessageStream', () => {
  it('delivers frames in order however the bytes are chunked, one byte at a time included', async () => {
    const p = await pair();
    const bytes = Buffer.concat(Array.from({ length: 20 }, (_, n) => frame({ type: 'ping', n, pad: 'é'.repeat(n * 3) })));
    for (let i = 0; i < bytes.length; i += 1 + (i % 7)) {
      p.client.write(bytes.subarray(i, i + 1 + (i % 7)));
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await expect.poll(() => p.received.length).toBe(20);
    expect(p.received.map((m) => m.n)).toEqual([...Array(20).keys()]);
    expect(p.received[19]!.pad).toBe('é'.repeat(57));
    expect(p.stream.closed).toBe(false);
  });

  it('sends frames the peer decodes, and refuses to send one over the limit', async () => {
    const p = await pair({ maxFrameBytes: 100 });
    const got: Buffer[] = [];
    p.client.on('data', (d: Buffer) => got.push(d));
    expect(p.stream.send({ type: 'ping', n: 7 })).toBe(true);
    await expect.poll(() => Buffer.concat(got).length).toBeGreaterThan(4);
    const buf = Buffer.concat(got);
    expect(buf.readUInt32BE(0)).toBe(buf.length - 4);
    expect(JSON.parse(buf.subarray(4).toString())).toEqual({ type: 'ping', n: 7 });
    expect(() => p.stream.send({ type: 'ping', n: 1, pad: 'x'.repeat(200) })).toThrow(/exceeds the 100-byte limit/);
  });

  it('closes at once on a length prefix of 0xFFFFFFFF, before any body arrives', async () => {
    const p = await pair();
    const started = Date.now();
    p.client.write(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    expect(await p.closed).toMatch(/frame of 4294967295 bytes exceeds the 1024-byte limit/);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it.each([
    ['an empty frame', Buffer.from([0, 0, 0, 0]), /empty frame/],
    ['invalid JSON', frame('{"type":"ping",'), /not UTF-8 JSON/],
    ['invalid UTF-8', frame(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), /not UTF-8 JSON/],
    ['a wrong schema', frame({ type: 'ping', n: 'one' }), /invalid "ping" frame: n:/],
    ['an unknown type', frame({ type: 'pong' }), /invalid "pong" frame/],
    ['JSON that is not an object', frame('42'), /invalid "\?" frame/],
  ])('closes the connection on %s, with the reason', async (_name, bytes, reason) => {
    const p = await pair();
    p.client.write(Buffer.concat([frame({ type: 'ping', n: 1 }), bytes, frame({ type: 'ping', n: 2 })]));
    expect(await p.closed).toMatch(reason);
    expect(p.received.map((m) => m.n)).toEqual([1]);
    await expect.poll(() => p.client.destroyed || p.client.readyState === 'closed').toBe(true);
  });

  it('reports a frame truncated by the peer closing mid-way', async () => {
    const p = await pair();
    p.client.end(frame({ type: 'ping', n: 1, pad: 'abcdef' }).subarray(0, 12));
    expect(await p.closed).toMatch(/closed by peer mid-frame \(8 of \d+ bytes\)/);
    expect(p.received).toEqual([]);
  });

  it('closes when the handler rejects a message, and delivers nothing after it', async () => {
    const p = await pair({
      onMessage: (m) => {
        if (m.n === 2) throw new Error('unknown job id 2');
      },
    });
    p.client.write(Buffer.concat([1, 2, 3].map((n) => frame({ type: 'ping', n }))));
    expect(await p.closed).toBe('protocol error: unknown job id 2');
    expect(p.received.map((m) => m.n)).toEqual([1, 2]);
  });
});

describe('FrameBatcher', () => {
  it('splits by count and by bytes, never exceeding either, each batch as full as allowed, in order', () => {
    const batches: string[][] = [];
    const budget = { maxItems: 5, maxBytes: 80 };
    const b = new FrameBatcher<string>(budget, (items) => batches.push(items), (s) => s);
    const items = Array.from({ length: 40 }, (_, i) => `${i}`.padEnd(i >= 20 && i % 2 === 0 ? 30 : 5, '.'));
    for (const it of items) b.push(it);
    b.flush();
    expect(batches.flat()).toEqual(items);
    const bytes = (xs: string[]) => xs.reduce((n, s) => n + jsonBytes(s) + 1, 0);
    batches.forEach((batch, i) => {
      expect(batch.length).toBeLessThanOrEqual(budget.maxItems);
      expect(bytes(batch)).toBeLessThanOrEqual(budget.maxBytes);
      const next = batches[i + 1]?.[0];
      // A batch was cut only because it was full by count or the next item would not fit.
      if (next !== undefined) expect(batch.length === budget.maxItems || bytes([...batch, next]) > budget.maxBytes).toBe(true);
    });
    expect(batches.some((x) => x.length === budget.maxItems)).toBe(true);
    expect(batches.some((x) => x.length < budget.maxItems)).toBe(true);
  });

  it('refuses an item no frame can carry, naming it', () => {
    const b = new FrameBatcher<string>(budgetFor(200, 50), () => {}, () => 'vignette "huge"');
    expect(() => b.push('x'.repeat(500))).toThrow(/vignette "huge" is 503 bytes encoded, more than a frame carries/);
  });
});
