/**
 * `panoptes worker`: runs jobs for a coordinator (`panoptes run --listen`, `panoptes serve
 * --worker-port`, the desktop app) with this machine's own model clients — its own catalog and its
 * own keys, which never travel; each call to a provider that bills is counted by the coordinator
 * before it is made. Reconnects with backoff whenever the coordinator goes away; stops
 * on Ctrl-C or SIGTERM (its jobs then go to other workers).
 * Runs on: Node (core).
 */
import { hostname } from 'node:os';
import type { Command } from 'commander';
import { PanoptesError } from '../../domain.js';
import { packageVersion } from '../../paths.js';
import type { ClientTls } from '../../remote/transport.js';
import { readPem, parseHostPort } from '../../remote/transport-options.js';
import type { WorkerAgent } from '../../remote/worker-agent.js';
import { EXIT, addCallingOptions, dataDirOf, parsePositiveInt, reportError, type CallingOptions } from '../common.js';

interface WorkerCliOptions extends CallingOptions {
  connect: string;
  token?: string;
  capacity: number;
  models?: string;
  callConcurrency: number;
  id?: string;
  tls?: boolean;
  ca?: string;
  fingerprint?: string;
}

export function registerWorkerCommand(program: Command): void {
  addCallingOptions(
    program
      .command('worker')
      .description('run jobs for a coordinator over TCP, with this machine\'s own models and keys')
      .requiredOption('--connect <host:port>', 'the coordinator\'s worker port')
      .option('--token <token>', 'the shared worker token (default: $PANOPTES_WORKER_TOKEN)')
      .option('--capacity <n>', 'jobs run at once', parsePositiveInt('--capacity'), 4)
      .option('--models <list>', 'comma-separated models to serve, or "all" (default: every model in this worker\'s catalog)')
      .option('--call-concurrency <n>', 'model calls in flight at once, across jobs', parsePositiveInt('--call-concurrency'), 8)
      .option('--id <name>', 'this worker\'s name (default: HOSTNAME-PID)')
      .option('--tls', 'connect with TLS, trusting the system\'s CAs')
      .option('--ca <file>', 'connect with TLS, trusting this CA or self-signed certificate (PEM)')
      .option('--fingerprint <sha256>', 'connect with TLS, trusting only the certificate with this sha256 fingerprint'),
  ).action(async (opts: WorkerCliOptions, cmd: Command) => {
    cmd.setOptionValue('exit', await workerCommand(opts));
  });
}

async function workerCommand(opts: WorkerCliOptions): Promise<number> {
  const [{ initTelemetry }, { loadCatalog }, { Router }, { WorkerAgent }, { workerStageJudge }, { workerBilling }] = await Promise.all([
    import('../../telemetry.js'),
    import('../../service/load-catalog.js'),
    import('../../models/router/router.js'),
    import('../../remote/worker-agent.js'),
    import('../../service/stage-judge.js'),
    import('../../service/wire-call-counter.js'),
  ]);
  // A worker is a long-running service: say what it does unless told to be quiet.
  const logger = initTelemetry({ defaultLevel: 'info' });
  let agent: WorkerAgent | undefined;
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const token = opts.token ?? process.env.PANOPTES_WORKER_TOKEN;
    if (!token) throw new PanoptesError('invalid_input', 'a worker token is required: --token or $PANOPTES_WORKER_TOKEN', { where: '--token' });
    const { host, port } = parseHostPort(opts.connect, '--connect');
    const catalog = loadCatalog(dataDirOf(opts), opts.catalog ?? []);
    const models = servedModels(opts.models, catalog.modelIds(), (m) => catalog.has(m));
    const tls: ClientTls | undefined =
      opts.ca !== undefined || opts.fingerprint !== undefined || opts.tls
        ? {
            ...(opts.ca === undefined ? {} : { ca: readPem(opts.ca, '--ca') }),
            fingerprint: opts.fingerprint,
          }
        : undefined;
    const router = new Router({ catalog, ...(opts.hostPatience === undefined ? {} : { hostPatienceMs: opts.hostPatience * 1000 }) });
    const billing = workerBilling(catalog);
    agent = new WorkerAgent({
      coordinator: { host, port, ...(tls ? { tls } : {}) },
      token,
      workerId: opts.id ?? `${hostname()}-${process.pid}`,
      capacity: opts.capacity,
      models,
      client: billing.sweep(router),
      counting: billing.counter,
      callConcurrency: opts.callConcurrency,
      version: packageVersion(),
      logger,
      stageJudge: workerStageJudge(router, catalog, billing.judge),
    });
    logger.info({ coordinator: opts.connect, models, capacity: opts.capacity, tls: Boolean(tls) }, 'worker starting');
    await agent.run(stop.signal);
    return EXIT.ok;
  } catch (err) {
    return reportError(err);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await agent?.close();
  }
}

/** `--models`: a list checked against this worker's catalog, "all", or (by default) the catalog's every model. */
function servedModels(option: string | undefined, catalogModels: string[], known: (m: string) => boolean): string[] | 'all' {
  if (option === undefined) return catalogModels;
  if (option.trim() === 'all') return 'all';
  const list = option.split(',').map((m) => m.trim()).filter(Boolean);
  if (list.length === 0) throw new PanoptesError('invalid_input', '--models: name at least one model, or "all"', { where: '--models' });
  for (const m of list) {
    if (!known(m)) {
      throw new PanoptesError('invalid_input', `--models: "${m}" is not in this worker's catalog (it has: ${catalogModels.join(', ')})`, {
        where: '--models',
      });
    }
  }
  return list;
}
