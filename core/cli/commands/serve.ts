/**
 * `panoptes serve`: the coordinator as a long-lived service (see serve-api.ts for what it runs).
 * This file defines the command; the server, the engine and their addons load when it runs.
 * Runs on: Node (core).
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { PanoptesError } from '../../domain.js';
import { HTTP_DEFAULTS } from '../../http/defaults.js';
import { addCallingOptions, parsePositiveInt } from '../common.js';
import type { ServeOptions } from '../serve-api.js';

export function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new PanoptesError('invalid_input', `--port must be a whole number from 0 to 65535, got "${value}"`, { where: '--port' });
  }
  return n;
}

export function registerServeCommand(program: Command): void {
  addCallingOptions(
    program
      .command('serve')
      .description('serve the HTTP API (and run queued runs) until stopped')
      .option('--host <address>', 'address to bind (anything but loopback is reachable from the network)', HTTP_DEFAULTS.host)
      .option('--port <n>', 'port to listen on (0: any free port)', parsePort, 8787)
      .option('--token <token>', `bearer token clients must send (default: $PANOPTES_TOKEN, else a generated one); at least 16 characters`)
      .option('--allowed-host <name...>', 'more Host names to answer to (when bound beyond loopback)')
      .option('--max-concurrent <n>', `requests in flight at once (default ${HTTP_DEFAULTS.maxConcurrent})`, parsePositiveInt('--max-concurrent'))
      .option('--max-queued-runs <n>', `runs waiting in the queue (default ${HTTP_DEFAULTS.maxQueuedRuns})`, parsePositiveInt('--max-queued-runs'))
      .option(
        '--manifest-root <dir>',
        'a folder clients may name manifests in, besides <data-dir>/manifests (repeatable)',
        (dir: string, dirs: string[] = []) => [...dirs, resolve(dir)],
      )
      .option('--ui', 'also serve the app at / (the desktop UI, in a browser) and print its address')
      .option('--worker-port <n>', 'accept `panoptes worker` connections on this TCP port (0: any free port)', parsePort)
      .option('--worker-host <address>', 'address the worker listener binds (default 127.0.0.1)')
      .option('--worker-token <token>', 'the token workers must present (default: $PANOPTES_WORKER_TOKEN)'),
  ).action(async (opts: ServeOptions, cmd: Command) => {
    const { browserUiAddon, serveCommand, workerListenerAddon } = await import('../serve-api.js');
    const addons = [...(opts.ui ? [browserUiAddon] : []), ...(opts.workerPort === undefined ? [] : [workerListenerAddon])];
    cmd.setOptionValue('exit', await serveCommand(opts, addons));
  });
}
