/**
 * A fake model provider for tests: a real HTTP server on 127.0.0.1 (port 0) that answers like
 * OpenAI chat-completions (`POST /v1/chat/completions`), Anthropic messages (`POST /v1/messages`)
 * and the plain generate endpoint (`POST /v1/generate`). Each request is scripted by the model id
 * it names: answer, fail with a status (429 with Retry-After, 500, 401, 402, a quota body), hang,
 * answer empty, or drop the connection. Every arrival is recorded with its time, model and headers,
 * so tests measure pacing, count what reached an unsafe host, and check what was sent.
 * Runs on: Node (tests).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

export type Behaviour =
  | {
      kind: 'ok';
      text?: string;
      inputTokens?: number;
      outputTokens?: number;
      cachedTokens?: number;
      reasoningTokens?: number;
      delayMs?: number;
      finishReason?: string;
      /** Run once the request has arrived, before it is answered (a test's step that must fall between the two). */
      onArrival?: () => void;
    }
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'empty' }
  | { kind: 'drop' };

export interface Arrival {
  /** performance.now() when the request arrived. */
  at: number;
  path: string;
  model: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export class FakeProvider {
  readonly arrivals: Arrival[] = [];
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly queued = new Map<string, Behaviour[]>();
  private readonly standing = new Map<string, Behaviour>();
  private inFlight = 0;
  /** The most requests that were open at once. */
  maxInFlight = 0;
  url = '';

  constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Answers every request for `model` this way (until changed). */
  always(model: string, b: Behaviour): this {
    this.standing.set(model, b);
    return this;
  }

  /** Answers the next requests for `model` these ways, in order, before falling back to `always`. */
  next(model: string, ...bs: Behaviour[]): this {
    this.queued.set(model, [...(this.queued.get(model) ?? []), ...bs]);
    return this;
  }

  count(model?: string): number {
    return model === undefined ? this.arrivals.length : this.arrivals.filter((a) => a.model === model).length;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = performance.now();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      // A request that is not JSON is recorded with an empty body.
    }
    const path = (req.url ?? '').split('?')[0]!;
    const model = String(body.model ?? '');
    this.arrivals.push({ at, path, model, headers: req.headers, body });
    const b = this.queued.get(model)?.shift() ?? this.standing.get(model) ?? { kind: 'ok' };
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    res.on('close', () => (this.inFlight -= 1));
    switch (b.kind) {
      case 'hang':
        return; // never answers; the socket is destroyed on stop()
      case 'drop':
        req.socket.destroy();
        return;
      case 'status':
        res.writeHead(b.status, { 'content-type': 'application/json', ...(b.headers ?? {}) });
        res.end(typeof b.body === 'string' ? b.body : JSON.stringify(b.body ?? { error: { message: `status ${b.status}` } }));
        return;
      case 'empty':
        return this.answer(res, path, model, { kind: 'ok', text: '' });
      case 'ok':
        b.onArrival?.();
        if (b.delayMs) await new Promise((r) => setTimeout(r, b.delayMs));
        return this.answer(res, path, model, b);
    }
  }

  private answer(res: ServerResponse, path: string, model: string, b: Extract<Behaviour, { kind: 'ok' }>): void {
    const text = b.text ?? `answer from ${model}`;
    const input = b.inputTokens ?? 11;
    const output = b.outputTokens ?? 7;
    let payload: unknown;
    if (path.endsWith('/messages')) {
      payload = {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model,
        content: text ? [{ type: 'text', text }] : [],
        stop_reason: b.finishReason ?? 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: input, output_tokens: output, cache_read_input_tokens: b.cachedTokens ?? 0, cache_creation_input_tokens: 0 },
      };
    } else if (path.endsWith('/generate')) {
      payload = { text, usage: { input_tokens: input, output_tokens: output }, finish_reason: b.finishReason ?? 'stop' };
    } else {
      payload = {
        id: 'chatcmpl-fake',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: b.finishReason ?? 'stop' }],
        usage: {
          prompt_tokens: input,
          completion_tokens: output,
          total_tokens: input + output,
          ...(b.cachedTokens ? { prompt_tokens_details: { cached_tokens: b.cachedTokens } } : {}),
          ...(b.reasoningTokens ? { completion_tokens_details: { reasoning_tokens: b.reasoningTokens } } : {}),
        },
      };
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A fake provider listening from before the enclosing file's (or describe block's) tests until after them. */
export function useFakeProvider(): FakeProvider {
  const fake = new FakeProvider();
  beforeAll(async () => {
    await fake.start();
  });
  afterAll(() => fake.stop());
  return fake;
}
