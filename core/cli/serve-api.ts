/**
 * What `panoptes serve` (and `panoptes desktop` where Electron cannot start) runs: the coordinator
 * as a long-lived service. Opens the engine, starts the scheduler (queued and interrupted runs are
 * taken up), serves the HTTP API on 127.0.0.1 behind a bearer token (from --token, else
 * PANOPTES_TOKEN, else generated and printed), prints the URL, and on SIGINT/SIGTERM stops
 * accepting, lets requests finish (briefly), hands running runs back to the queue and closes the
 * database.
 * What else `serve` runs goes through `ServeAddon`s (the browser bridge's plugin, the TCP worker
 * listener): each registers on the API's Fastify instance before it listens and/or starts beside
 * it afterwards, and is stopped in reverse order on shutdown.
 * Runs on: Node (core).
 */
import type { FastifyInstance } from 'fastify';
import { PanoptesError } from '../domain.js';
import { assertUsableToken, generateToken } from '../http/auth.js';
import { createHttpServer } from '../http/api.js';
import { browserBridge, bridgeSources } from '../http/bridge.js';
import { ManifestRoots } from '../http/manifest-roots.js';
import { startWorkerListener } from '../remote/listener.js';
import type { Engine } from '../service/engine.js';
import { initTelemetry } from '../telemetry.js';
import { EXIT, dataDirOf, reportError, type CallingOptions } from './common.js';
import { openCliEngine } from './open-engine.js';

export interface ServeOptions extends CallingOptions {
  host: string;
  port: number;
  token?: string;
  /** The token was made by Panoptes (the desktop fallback's, kept per data folder), not given by the user: it may be shown. */
  tokenGenerated?: boolean;
  /** Folders besides `<data-dir>/manifests` that the API and the bridge may read manifests from. */
  manifestRoot?: string[];
  allowedHost?: string[];
  maxConcurrent?: number;
  maxQueuedRuns?: number;
  /** Also serve the app (the renderer over the browser bridge) at `/`. */
  ui?: boolean;
  /** Print only the app's address and log warnings only (PANOPTES_LOG=info for more): how `npm start` runs it. */
  quiet?: boolean;
  /** Called once the server listens (the desktop fallback saves its port and token then). */
  onListening?: (server: RunningServer) => void;
  /** Accept `panoptes worker` connections on this TCP port. */
  workerPort?: number;
  workerHost?: string;
  workerToken?: string;
}

/** Where the token came from, for the start-up lines (a given token is never echoed). */
export type TokenSource = '--token' | 'PANOPTES_TOKEN' | 'generated';

export interface ServeContext {
  engine: Engine;
  app: FastifyInstance;
  token: string;
  /** Where the token came from: only a generated one is ever printed. */
  tokenSource: TokenSource;
  options: ServeOptions;
}

/** Something `serve` runs beside the API. */
export interface ServeAddon {
  name: string;
  /** Before the server listens: register plugins or routes on `ctx.app`. */
  register?(ctx: ServeContext): Promise<void> | void;
  /** After it listens: start what runs beside it; the returned function stops it. */
  start?(ctx: ServeContext & { url: string }): Promise<(() => Promise<void>) | void>;
}

export interface RunningServer {
  url: string;
  engine: Engine;
  app: FastifyInstance;
  /** Stops accepting, waits up to `graceMs` for requests in flight, stops the addons and the engine. */
  close(graceMs?: number): Promise<void>;
}

/** How long shutdown waits for requests in flight (a long export) before cutting them off. */
const SHUTDOWN_GRACE_MS = 5_000;

export function resolveToken(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  generated = false,
): { token: string; source: TokenSource } {
  if (flag !== undefined) {
    assertUsableToken(flag, '--token');
    return { token: flag, source: generated ? 'generated' : '--token' };
  }
  if (env.PANOPTES_TOKEN) {
    assertUsableToken(env.PANOPTES_TOKEN, 'PANOPTES_TOKEN');
    return { token: env.PANOPTES_TOKEN, source: 'PANOPTES_TOKEN' };
  }
  return { token: generateToken(), source: 'generated' };
}

/** Serves the API (and the addons) over an open engine, with its scheduler running. */
export async function startServer(
  engine: Engine,
  options: ServeOptions,
  { token, source }: { token: string; source: TokenSource },
  addons: readonly ServeAddon[] = [],
): Promise<RunningServer> {
  const app = createHttpServer(engine, {
    token,
    host: options.host,
    allowedHosts: options.allowedHost,
    maxConcurrent: options.maxConcurrent,
    maxQueuedRuns: options.maxQueuedRuns,
    manifestRoots: options.manifestRoot,
  });
  const ctx: ServeContext = { engine, app, token, tokenSource: source, options };
  for (const addon of addons) await addon.register?.(ctx);
  try {
    await app.listen({ host: options.host, port: options.port });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw portInUse(options.host, options.port, err);
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const hostInUrl = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${hostInUrl}:${port}`;
  const stops: Array<() => Promise<void>> = [];
  for (const addon of addons) {
    const stop = await addon.start?.({ ...ctx, url });
    if (stop) stops.push(stop);
  }
  engine.start();
  return {
    url,
    engine,
    app,
    async close(graceMs = SHUTDOWN_GRACE_MS) {
      const cutOff = setTimeout(() => app.server.closeAllConnections(), graceMs);
      try {
        await app.close();
      } finally {
        clearTimeout(cutOff);
      }
      for (const stop of stops.reverse()) await stop();
      await engine.close();
    },
  };
}

/** A port another program holds, said in one line. */
export function portInUse(host: string, port: number, cause: unknown): PanoptesError {
  return new PanoptesError('invalid_input', `${host}:${port} is already in use: choose another --port (0: any free port)`, { where: '--port', cause });
}

/** `--ui`: the browser bridge and the built renderer on the API's server; the printed address carries the token. */
export const browserUiAddon: ServeAddon = {
  name: 'ui',
  async register({ app, engine, token, options }) {
    await app.register(browserBridge, {
      ...bridgeSources(engine),
      token,
      manifestRoots: ManifestRoots.of(engine.dataDir, options.manifestRoot),
    });
  },
  async start({ url, token, tokenSource }) {
    const shown = tokenSource === 'generated' ? encodeURIComponent(token) : `<the token from ${tokenSource}>`;
    process.stdout.write(`panoptes: the app is at ${url}/#token=${shown}\n`);
  },
};

/** `--worker-port`: the TCP listener for remote workers, beside the API. */
export const workerListenerAddon: ServeAddon = {
  name: 'workers',
  register({ options }) {
    // Checked before the server listens, so a missing token stops `serve` before anything starts.
    if (!(options.workerToken ?? process.env.PANOPTES_WORKER_TOKEN)) {
      throw new PanoptesError('invalid_input', '--worker-port needs a worker token: --worker-token or $PANOPTES_WORKER_TOKEN', { where: '--worker-token' });
    }
  },
  async start({ engine, options }) {
    const listener = await startWorkerListener(engine, {
      port: options.workerPort!,
      token: (options.workerToken ?? process.env.PANOPTES_WORKER_TOKEN)!,
      host: options.workerHost,
    });
    process.stdout.write(`panoptes: listening for workers on ${listener.host}:${listener.port}\n`);
    return () => listener.close();
  },
};

/** Runs `serve` until SIGINT, SIGTERM or SIGHUP; resolves to the exit status. */
export async function serveCommand(opts: ServeOptions, addons: readonly ServeAddon[]): Promise<number> {
  let engine: Engine | undefined;
  let server: RunningServer;
  let token: { token: string; source: TokenSource };
  try {
    token = resolveToken(opts.token, process.env, opts.tokenGenerated ?? false);
    // A service logs its requests (PANOPTES_LOG=warn quiets it); the desktop fallback is quiet unless PANOPTES_LOG asks.
    initTelemetry({ defaultLevel: opts.quiet ? 'warn' : 'info' });
    // With workers expected, a job whose model only a worker serves waits for one (30 s) before failing.
    // A baseline file read again to score is held to the roots that held it at attach over HTTP.
    const baselineRoots = ManifestRoots.of(dataDirOf(opts), opts.manifestRoot).roots;
    engine = openCliEngine(opts, { baselineRoots, ...(opts.workerPort === undefined ? {} : { waitForWorkerMs: 30_000 }) });
    server = await startServer(engine, opts, token, addons);
  } catch (err) {
    await engine?.close();
    return reportError(err);
  }
  const { url } = server;
  if (!opts.quiet) {
    const shown = token.source === 'generated' ? token.token : `(from ${token.source})`;
    process.stdout.write(`panoptes: serving the HTTP API at ${url}\ntoken: ${shown}\n`);
    process.stdout.write(`try: curl -H "Authorization: Bearer <token>" ${url}/stats\n`);
  }
  opts.onListening?.(server);

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
    process.once('SIGHUP', resolve);
  });
  // A second signal while shutting down means "now".
  const force = () => process.exit(130);
  process.once('SIGINT', force);
  process.once('SIGTERM', force);
  process.once('SIGHUP', force);
  process.stderr.write(`panoptes: ${signal}: stopping (running runs go back to the queue)\n`);
  try {
    await server.close();
    return EXIT.ok;
  } catch (err) {
    return reportError(err);
  } finally {
    process.off('SIGINT', force);
    process.off('SIGTERM', force);
    process.off('SIGHUP', force);
  }
}
