/**
 * MessageStream: gives a byte stream (a TCP or TLS socket) its message boundaries back. Each frame
 * is a 4-byte big-endian length, then that many bytes of UTF-8 JSON, validated against the schema
 * the owner expects at this stage of the conversation. The length is checked against the limit
 * before a byte of the body is buffered, so a hostile prefix (0xFFFFFFFF) costs nothing. Any
 * violation — a bad length, a truncated frame, invalid UTF-8 or JSON, a frame the schema refuses,
 * a handler that rejects the message — closes this one connection and reports why, once.
 * Runs on: Node (core).
 */
import type { Socket } from 'node:net';
import type { z } from 'zod';
import { PanoptesError } from '../domain.js';
import { formatZodIssues } from '../validation.js';

const HEADER_BYTES = 4;

export interface MessageStreamOptions<In> {
  /** What frames must look like now; the owner may swap it as the conversation advances. */
  schema: z.ZodType<In>;
  /** Largest frame body accepted or sent, in bytes. */
  maxFrameBytes: number;
  /** Called for every valid frame, in order. A throw closes the connection with its message. */
  onMessage(message: In): void;
  /** Called once, when the connection ends for any reason, with that reason. */
  onClose(reason: string): void;
}

/** The sending half of a stream: what an actor that only talks back needs. */
export interface FrameChannel {
  readonly maxFrameBytes: number;
  send(message: object): boolean;
  close(reason: string, last?: object): void;
}

export class MessageStream<In> implements FrameChannel {
  schema: z.ZodType<In>;
  maxFrameBytes: number;
  private readonly socket: Socket;
  private readonly onMessage: (message: In) => void;
  private readonly onClose: (reason: string) => void;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Body length of the frame being read, or -1 while reading a header. */
  private need = -1;
  private closeReason: string | null = null;

  constructor(socket: Socket, opts: MessageStreamOptions<In>) {
    this.socket = socket;
    this.schema = opts.schema;
    this.maxFrameBytes = opts.maxFrameBytes;
    this.onMessage = opts.onMessage;
    this.onClose = opts.onClose;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => this.finish(`socket error: ${err.code ?? err.message}`));
    socket.on('close', () => {
      const partial = this.need >= 0 ? ` mid-frame (${this.buffered} of ${this.need} bytes)` : this.buffered > 0 ? ' mid-header' : '';
      this.finish(`connection closed by peer${partial}`);
    });
  }

  get closed(): boolean {
    return this.closeReason !== null;
  }

  /** Why the connection ended (null while open). */
  get reason(): string | null {
    return this.closeReason;
  }

  /**
   * Sends one message as one frame; returns false when the socket's buffer is full or the stream
   * is closed (the message is then dropped: a closed peer has nothing to receive it).
   */
  send(message: object): boolean {
    if (this.closed) return false;
    const text = JSON.stringify(message);
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > this.maxFrameBytes) {
      throw new PanoptesError('internal', `a ${bytes}-byte frame exceeds the ${this.maxFrameBytes}-byte limit`, { where: 'frame' });
    }
    const frame = Buffer.allocUnsafe(HEADER_BYTES + bytes);
    frame.writeUInt32BE(bytes, 0);
    frame.write(text, HEADER_BYTES, 'utf8');
    return this.socket.write(frame);
  }

  /** Ends the connection, optionally sending one last message (e.g. why it was refused). */
  close(reason: string, last?: object): void {
    if (this.closed) return;
    if (last !== undefined) {
      try {
        this.send(last);
      } catch {
        // The parting message is a courtesy; the connection closes either way.
      }
      this.finish(reason);
      this.socket.end();
      // A peer that never reads would hold the socket open: give the last frame a moment, then cut.
      setTimeout(() => this.socket.destroy(), 1000).unref();
      return;
    }
    this.finish(reason);
    this.socket.destroy();
  }

  private finish(reason: string): void {
    if (this.closeReason !== null) return;
    this.closeReason = reason;
    this.chunks = [];
    this.buffered = 0;
    this.onClose(reason);
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (!this.closed) {
      if (this.need < 0) {
        if (this.buffered < HEADER_BYTES) return;
        const length = this.take(HEADER_BYTES).readUInt32BE(0);
        if (length === 0) return this.close('protocol error: empty frame');
        if (length > this.maxFrameBytes) {
          return this.close(`protocol error: frame of ${length} bytes exceeds the ${this.maxFrameBytes}-byte limit`);
        }
        this.need = length;
      }
      if (this.buffered < this.need) return;
      const body = this.take(this.need);
      this.need = -1;
      this.deliver(body);
    }
  }

  /** Removes and returns the next `n` buffered bytes (copying only when they span chunks). */
  private take(n: number): Buffer {
    this.buffered -= n;
    const first = this.chunks[0]!;
    if (first.length > n) {
      this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    if (first.length === n) {
      this.chunks.shift();
      return first;
    }
    const out = Buffer.allocUnsafe(n);
    let copied = 0;
    while (copied < n) {
      const head = this.chunks[0]!;
      const part = Math.min(head.length, n - copied);
      head.copy(out, copied, 0, part);
      copied += part;
      if (part === head.length) this.chunks.shift();
      else this.chunks[0] = head.subarray(part);
    }
    return out;
  }

  private deliver(body: Buffer): void {
    let value: unknown;
    try {
      value = JSON.parse(this.decoder.decode(body));
    } catch (err) {
      return this.close(`protocol error: frame is not UTF-8 JSON (${(err as Error).message.slice(0, 120)})`);
    }
    const parsed = this.schema.safeParse(value);
    if (!parsed.success) {
      const type = typeof (value as { type?: unknown } | null)?.type === 'string' ? String((value as { type: string }).type).slice(0, 40) : '?';
      return this.close(`protocol error: invalid "${type}" frame: ${formatZodIssues(parsed.error).slice(0, 500)}`);
    }
    try {
      this.onMessage(parsed.data);
    } catch (err) {
      this.close(`protocol error: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
