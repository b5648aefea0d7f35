/**
 * A lean `fetch` for the provider SDKs and the generate provider: node:http(s) over keep-alive
 * agents, the whole answer read before the promise resolves. Node 20's global fetch (undici) costs
 * several times more CPU per call than node:http (measured ~0.6-0.8 ms against ~0.1-0.2 ms per small
 * JSON call on this machine), and so does building a WHATWG `Response` around a body already in
 * memory (~0.1-0.2 ms: it wraps the bytes in a stream). Either would cap a sweep at a few hundred
 * calls a second. The SDKs accept any fetch, so they keep their request building, error classes and
 * timeouts and ride on this instead; what they get back is a `BufferedResponse`: the status, the
 * headers (read-only, `Headers`-shaped) and the body as text or JSON — the part of `Response` they
 * read for non-streaming calls. Only string or byte request bodies, no streaming. Aborts reject with an `AbortError`, as
 * fetch's do, so the SDKs still tell a timeout from a cancellation.
 * Runs on: Node (core).
 */
import http from 'node:http';
import https from 'node:https';

/** Sockets per origin kept open: more than any provider's concurrency, so calls never queue here. */
const MAX_SOCKETS = 256;

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, scheduling: 'lifo' }),
};

function headerRecord(h: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  if (h instanceof Headers || Array.isArray(h)) {
    for (const [k, v] of h as Iterable<[string, string]>) out[k] = v;
  } else {
    Object.assign(out, h);
  }
  return out;
}

/**
 * The response's headers, read-only, over Node's already-lowercased header object: the `Headers`
 * methods callers use (get, has, iteration), without building an undici `Headers` per call.
 */
export class ResponseHeaders {
  constructor(private readonly raw: http.IncomingHttpHeaders) {}

  get(name: string): string | null {
    const v = this.raw[name.toLowerCase()];
    if (v === undefined) return null;
    return Array.isArray(v) ? v.join(', ') : v;
  }

  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }

  *entries(): IterableIterator<[string, string]> {
    for (const k of Object.keys(this.raw).sort()) {
      const v = this.get(k);
      if (v !== null) yield [k, v];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [k] of this.entries()) yield k;
  }

  *values(): IterableIterator<string> {
    for (const [, v] of this.entries()) yield v;
  }

  forEach(fn: (value: string, key: string, parent: ResponseHeaders) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

/** A finished HTTP answer with its body in memory: what a fetch caller reads of a `Response`, without the stream. */
export class BufferedResponse {
  readonly ok: boolean;
  readonly redirected = false;
  readonly type = 'basic';
  readonly bodyUsed = false;

  constructor(
    readonly url: string,
    readonly status: number,
    readonly statusText: string,
    readonly headers: ResponseHeaders,
    private readonly bytes: Buffer,
  ) {
    this.ok = status >= 200 && status < 300;
  }

  async text(): Promise<string> {
    return this.bytes.toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(this.bytes.toString('utf8')) as unknown;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return new Uint8Array(this.bytes).buffer;
  }
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('The operation was aborted', 'AbortError');
}

/** `fetch` for JSON APIs over node:http(s) keep-alive agents. */
export async function nodeFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  const agent = agents[url.protocol as keyof typeof agents];
  if (!agent) throw new TypeError(`unsupported protocol ${url.protocol}`);
  const body = init.body;
  if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
    throw new TypeError('nodeFetch sends only string or byte bodies');
  }
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw abortError(signal);
  const headers = headerRecord(init.headers);
  if (body !== undefined && body !== null) headers['content-length'] = String(Buffer.byteLength(body));
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise<Response>((resolve, reject) => {
    const req = lib.request(url, { method: init.method ?? 'GET', headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const answer = new BufferedResponse(url.href, res.statusCode ?? 0, res.statusMessage ?? '', new ResponseHeaders(res.headers), Buffer.concat(chunks));
        // Callers type fetch as returning a Response; they read only what BufferedResponse has (see above).
        resolve(answer as unknown as Response);
      });
    });
    const onAbort = () => req.destroy(abortError(signal!));
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('close', () => signal?.removeEventListener('abort', onAbort));
    req.on('error', (err) => reject(signal?.aborted ? abortError(signal) : err));
    req.end(body ?? undefined);
  });
}
