/**
 * What `panoptes desktop` does once it runs: before launching Electron, better-sqlite3 is built
 * for Electron's ABI (scripts/electron-native.mjs, skipped while up to date) and handed to the
 * app in PANOPTES_NATIVE_BINDING. Where Electron cannot start, one line says why, and
 * `panoptes serve --ui` runs in its place (the same function), quietly, printing only the app's
 * address: on the port and with the token this data folder used last time (see launch-state.ts)
 * unless --port or PANOPTES_TOKEN say otherwise. The command loads this file when it runs, so
 * child processes, sockets and the HTTP server cost nothing to the command line's start.
 * Runs on: Node (core).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative, resolve } from 'node:path';
import { PanoptesError } from '../domain.js';
import { HTTP_DEFAULTS } from '../http/defaults.js';
import { generateToken } from '../http/auth.js';
import { packageRoot } from '../paths.js';
import { dataDirOf, reportError, type CommonOptions } from './common.js';
import { nodeProbe, planDesktopLaunch } from './desktop-plan.js';

/**
 * Runs scripts/electron-native.mjs; resolves to the addon's path, or why it could not be built
 * (its full output is kept in .electron-native/build.log).
 */
export async function buildNativeBinding(root: string): Promise<{ path: string } | { reason: string }> {
  const script = join(root, 'scripts', 'electron-native.mjs');
  const child = spawn(process.execPath, [script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    // The first build takes a minute: say so once, keep the compiler's output for the log.
    if (stderr === '') process.stderr.write('panoptes: building better-sqlite3 for Electron (first start only)...\n');
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((res) => child.on('close', res));
  if (code === 0) {
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { path?: string };
    if (result.path) return { path: result.path };
  }
  const log = join(root, '.electron-native', 'build.log');
  mkdirSync(join(root, '.electron-native'), { recursive: true });
  writeFileSync(log, stderr);
  return { reason: `better-sqlite3 could not be built for Electron (see ${relative(process.cwd(), log) || log})` };
}

export interface ElectronLaunch {
  binary: string;
  /** dist/electron/main.js */
  main: string;
  nativeBinding: string;
  dataDir?: string;
  catalogs?: string[];
  env?: NodeJS.ProcessEnv;
}

/** Starts the desktop app and resolves to its exit status; Ctrl-C and SIGTERM reach it. */
export async function launchElectron(launch: ElectronLaunch): Promise<number> {
  const { ELECTRON_RUN_AS_NODE: _runAsNode, ...env } = launch.env ?? process.env;
  const args = [launch.main, ...(launch.catalogs ?? []).map((c) => `--catalog=${c}`)];
  const child = spawn(launch.binary, args, {
    stdio: 'inherit',
    env: {
      ...env,
      PANOPTES_NATIVE_BINDING: launch.nativeBinding,
      PANOPTES_DATA_DIR: launch.dataDir,
    },
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  try {
    return await new Promise<number>((res, rej) => {
      child.once('error', (err) => rej(new PanoptesError('internal', `Electron did not start: ${err.message}`, { where: launch.binary, cause: err })));
      child.once('exit', (code, signal) => res(code ?? (signal ? 1 : 0)));
    });
  } finally {
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
  }
}

export interface DesktopOptions extends CommonOptions {
  port: number;
}

/** Whether a TCP port on the host can be bound right now. */
function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((res) => {
    const probe = createServer();
    probe.once('error', () => res(false));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => res(true)));
  });
}

/**
 * The browser app where Electron cannot start: quiet, on the port and with the token this data
 * folder used last time (unless --port or PANOPTES_TOKEN say otherwise), so open tabs and saved
 * addresses keep working across restarts.
 */
async function serveBrowserApp(opts: DesktopOptions, portGiven: boolean): Promise<number> {
  const [{ readLaunchState, saveLaunchState }, { browserUiAddon, serveCommand }] = await Promise.all([import('./launch-state.js'), import('./serve-api.js')]);
  const host = HTTP_DEFAULTS.host;
  const dataDir = resolve(dataDirOf(opts));
  const saved = readLaunchState(dataDir);
  let port = opts.port;
  if (!portGiven && saved) {
    if (await portFree(host, saved.port)) port = saved.port;
    else process.stdout.write(`panoptes: port ${saved.port} (used last time) is taken; using a free one, so tabs open at the old address must be reopened\n`);
  }
  const token = process.env.PANOPTES_TOKEN ? undefined : (saved?.token ?? generateToken());
  return serveCommand(
    {
      ...opts,
      host,
      port,
      quiet: true,
      ...(token === undefined ? {} : { token, tokenGenerated: true }),
      onListening: (server) => {
        const address = server.app.server.address();
        if (typeof address === 'object' && address !== null) {
          saveLaunchState(dataDir, { port: address.port, token: token ?? process.env.PANOPTES_TOKEN! });
        }
      },
    },
    [browserUiAddon],
  );
}

export async function desktopCommand(opts: DesktopOptions, portGiven: boolean): Promise<number> {
  const root = packageRoot();
  let plan = planDesktopLaunch(nodeProbe(root));
  if (plan.mode === 'electron') {
    const native = await buildNativeBinding(root);
    if ('path' in native) {
      try {
        return await launchElectron({
          binary: plan.binary,
          main: join(root, 'dist', 'electron', 'main.js'),
          nativeBinding: native.path,
          ...(opts.dataDir === undefined ? {} : { dataDir: resolve(opts.dataDir) }),
          ...(opts.catalog === undefined ? {} : { catalogs: opts.catalog.map((c) => resolve(c)) }),
        });
      } catch (err) {
        return reportError(err);
      }
    }
    plan = { mode: 'browser', reason: native.reason };
  }
  process.stdout.write(`panoptes: ${plan.reason}; opening the app in the browser instead\n`);
  return serveBrowserApp(opts, portGiven);
}
