/**
 * `panoptes run`: create a run and drive it to the end in this process, with live progress;
 * print per-model calls, tokens and estimated cost (or one JSON object with --json).
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { PanoptesError, type Run } from '../../domain.js';
import { startWorkerListener, type WorkerListener } from '../../remote/listener.js';
import { loadServerTls, parsePort } from '../../remote/transport.js';
import { responsesPath } from '../../scheduler/response-log.js';
import type { ModelCost, RunSummary } from '../../service/contract.js';
import type { Engine } from '../../service/engine.js';
import { usageTotals } from '../../service/summaries.js';
import { toCacheStats, toModelStats } from '../../http/stats-shapes.js';
import { EXIT, addCallingOptions, formatInt, formatUsd, handedOverLine, openCliEngine, parsePositiveInt, printTable, reportError, type CallingOptions, addScoringOptions } from '../common.js';
import { createProgressReporter } from '../progress.js';
import { readScoringFile } from '../scoring-file.js';
import { formatScoreReport } from '../../scoring/format-report.js';

interface RunCliOptions extends CallingOptions {
  endWithFailures?: 'done' | 'failed';
  manifest: string;
  models: string;
  epochs: number;
  concurrency?: number;
  callConcurrency?: number;
  privacy?: 'strict' | 'fallback' | 'off';
  skipPromptCache?: boolean;
  shareCacheAcrossEpochs?: boolean;
  probe?: boolean;
  temperature?: number;
  maxTokens?: number;
  seed?: number;
  json?: boolean;
  progress: boolean;
  listen?: number;
  listenHost?: string;
  token?: string;
  tlsCert?: string;
  tlsKey?: string;
  local: boolean;
  waitForWorkers?: number;
  scorers?: string;
}

/** The summary `--json` prints and `run`/`resume` share. */
export function runSummaryJson(engine: Engine, run: Run) {
  const usage = engine.service.stats({ runId: run.id });
  return usage.then((s) => ({
    run_id: run.id,
    status: run.status,
    job_count: run.jobCount,
    done_count: run.doneCount,
    failed_count: run.failedCount,
    error: run.error,
    responses_path: responsesPath(engine.dataDir, run.id),
    elapsed_ms: run.finishedAt && run.startedAt ? run.finishedAt - run.startedAt : null,
    models: s.models.map((m) => ({ ...toModelStats(m), ...toCacheStats(m) })),
    total_est_cost_usd: s.totalEstCostUsd,
    ...toCacheStats({
      cachedCalls: s.totalCachedCalls,
      cachedInputTokens: s.totalCachedInputTokens,
      cachedOutputTokens: s.totalCachedOutputTokens,
      savedCostUsd: s.totalSavedCostUsd,
    }),
  }));
}

/**
 * Calls, billed tokens and cost per model, and what the prompt cache answered: a re-run served
 * from the cache shows its cached calls, the tokens those answers carry and the cost they saved.
 */
export function printUsageTable(models: ModelCost[], out: NodeJS.WriteStream = process.stdout): void {
  const t = usageTotals(models);
  const anyCached = t.cachedCalls > 0;
  const row = (name: string, u: Omit<ModelCost, 'model'>) => [
    name,
    formatInt(u.calls),
    formatInt(u.inputTokens),
    formatInt(u.outputTokens),
    formatUsd(u.estCostUsd),
    ...(anyCached ? [formatInt(u.cachedCalls), formatInt(u.cachedInputTokens + u.cachedOutputTokens), formatUsd(u.savedCostUsd)] : []),
  ];
  const rows = [
    ['model', 'calls', 'input tokens', 'output tokens', 'est. cost', ...(anyCached ? ['from cache', 'cached tokens', 'saved'] : [])],
    ...models.map((m) => row(m.model, m)),
    row('total', t),
  ];
  printTable(rows, out);
}

/** Lists every vignette the run gave up on, with its last error, and how to retry them. */
export function printFailures(engine: Engine, run: Run, out: NodeJS.WriteStream = process.stdout): void {
  const total = engine.store.vignetteFailureCount(run.id);
  if (total === 0) return;
  out.write(`${total} vignette(s) failed:\n`);
  for (const f of engine.store.vignetteFailures(run.id, 1000)) {
    out.write(`  ${f.vignetteId}  ${f.model}@${f.epoch}  after ${f.attempts} attempt(s): ${f.message}\n`);
  }
  if (total > 1000) out.write(`  and ${total - 1000} more\n`);
  out.write(`retry them: panoptes resume ${run.id} --retry-failed\n`);
}

/** Prints a finished run the way a person reads it. */
export async function printRunResult(engine: Engine, run: Run): Promise<void> {
  const stats = await engine.service.stats({ runId: run.id });
  const secs = run.finishedAt && run.startedAt ? ((run.finishedAt - run.startedAt) / 1000).toFixed(1) : '?';
  process.stdout.write(`run ${run.id}: ${run.status} (${run.doneCount}/${run.jobCount} jobs, ${run.failedCount} failed) in ${secs}s\n`);
  if (run.error) process.stdout.write(`reason: ${run.error}\n`);
  printFailures(engine, run);
  printUsageTable(stats.models);
  process.stdout.write(`responses: ${responsesPath(engine.dataDir, run.id)}\n`);
}

export function registerRunCommand(program: Command): void {
  addScoringOptions(addCallingOptions(
    program
      .command('run')
      .description('create a run and drive it to the end in this process')
      .requiredOption('--manifest <file>', 'JSONL manifest: one {"id", "prompt"} per line')
      .requiredOption('--models <list>', 'comma-separated logical model ids from the catalog')
      .option('--epochs <n>', 'times to pose every vignette to every model', parsePositiveInt('--epochs'), 1)
      .option('--concurrency <n>', 'jobs in flight at once (default 4)', parsePositiveInt('--concurrency'))
      .option('--call-concurrency <n>', 'model calls in flight at once (default 8)', parsePositiveInt('--call-concurrency'))
      .option('--privacy <mode>', 'strict | fallback | off (default strict)')
      .option('--skip-prompt-cache', 'neither read nor write the prompt cache; the run\'s records are kept as always')
      .option('--share-cache-across-epochs', 'let the prompt cache answer later epochs with earlier ones')
      .option('--end-with-failures <status>', 'how a run with vignettes given up on ends: failed (default) or done')
      .option('--probe', 'probe every host of the models first (one 16-token call each); refuse the run if a model has no host left')
      .option('--temperature <t>', 'sampling temperature', Number)
      .option('--max-tokens <n>', 'maximum output tokens per call', parsePositiveInt('--max-tokens'))
      .option('--seed <n>', 'sampling seed', Number)
      .option('--scorers <file>', 'a scoring file (JSON or YAML): score each record as it lands')
      .option('--json', 'print one JSON summary object instead of a table')
      .option('--no-progress', 'no live progress')
      .option('--listen <port>', 'accept `panoptes worker` connections on this port (0: any free port)', (v: string) => parsePort(v, '--listen'))
      .option('--listen-host <addr>', 'address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)')
      .option('--token <token>', 'the token workers must present (default: $PANOPTES_WORKER_TOKEN)')
      .option('--tls-cert <file>', 'serve workers over TLS with this certificate (PEM)')
      .option('--tls-key <file>', 'and this private key (PEM)')
      .option('--no-local', 'run no jobs in this process: only remote workers do (needs --listen)')
      .option('--wait-for-workers <seconds>', 'how long a job waits for a worker serving its model (default 30 with --no-local)', parsePositiveInt('--wait-for-workers')),
  )).action(async (opts: RunCliOptions, cmd: Command) => {
    cmd.setOptionValue('exit', await runCommand(opts));
  });
}

async function runCommand(opts: RunCliOptions): Promise<number> {
  let engine: Engine | undefined;
  let listener: WorkerListener | undefined;
  try {
    if (opts.listen === undefined && !opts.local) throw new PanoptesError('invalid_input', '--no-local needs --listen: no worker could run the jobs', { where: '--no-local' });
    engine = openCliEngine(opts, {
      local: opts.local,
      ...(opts.callConcurrency === undefined ? {} : { callConcurrency: opts.callConcurrency }),
      ...(opts.waitForWorkers === undefined ? {} : { waitForWorkerMs: opts.waitForWorkers * 1000 }),
    });
    if (opts.listen !== undefined) {
      const token = opts.token ?? process.env.PANOPTES_WORKER_TOKEN;
      if (!token) throw new PanoptesError('invalid_input', '--listen needs a worker token: --token or $PANOPTES_WORKER_TOKEN', { where: '--token' });
      const tls = loadServerTls(opts.tlsCert, opts.tlsKey);
      listener = await startWorkerListener(engine, { port: opts.listen, token, ...(opts.listenHost ? { host: opts.listenHost } : {}), ...(tls ? { tls } : {}) });
      process.stderr.write(`listening for workers on ${listener.host}:${listener.port}${listener.tls ? ' (TLS)' : ''}\n`);
    }
    const sampling = {
      ...(opts.temperature === undefined ? {} : { temperature: opts.temperature }),
      ...(opts.maxTokens === undefined ? {} : { maxTokens: opts.maxTokens }),
      ...(opts.seed === undefined ? {} : { seed: opts.seed }),
    };
    const scorers = opts.scorers === undefined ? undefined : await readScoringFile(opts.scorers);
    const run = await engine.service.createRun({
      manifestPath: opts.manifest,
      models: opts.models.split(',').map((m) => m.trim()).filter(Boolean),
      epochs: opts.epochs,
      ...(opts.concurrency === undefined ? {} : { concurrency: opts.concurrency }),
      ...(opts.privacy === undefined ? {} : { privacy: opts.privacy }),
      ...(opts.skipPromptCache ? { skipPromptCache: true } : {}),
      ...(opts.shareCacheAcrossEpochs ? { shareCacheAcrossEpochs: true } : {}),
      ...(opts.endWithFailures === undefined ? {} : { endWithFailures: opts.endWithFailures }),
      ...(opts.probe ? { probe: true } : {}),
      ...(Object.keys(sampling).length > 0 ? { sampling } : {}),
      ...(scorers ? { scorers } : {}),
    });
    if (!opts.json) process.stderr.write(`run ${run.id}: ${run.jobCount} jobs, ${run.vignetteCount * run.jobCount} calls\n`);
    const final = await driveRun(engine, run.id, opts.progress && !opts.json);
    if (engine.scheduler.lostRun(run.id)) {
      process.stderr.write(handedOverLine(run.id));
      return EXIT.handedOver;
    }
    if (opts.json) process.stdout.write(JSON.stringify(await runSummaryJson(engine, final)) + '\n');
    else {
      await printRunResult(engine, final);
      // A scored run ends with its leaderboard: the first scorer's report (others: `panoptes report --scorer`).
      if (scorers) process.stdout.write('\n' + formatScoreReport(await engine.service.report({ runId: run.id })).join('\n') + '\n');
    }
    return final.status === 'done' ? EXIT.ok : EXIT.failed;
  } catch (err) {
    return reportError(err);
  } finally {
    await engine?.close();
    await listener?.close();
  }
}

/** Drives one run to its end, showing progress; Ctrl-C, SIGTERM or SIGHUP (the terminal closed) leaves it for `panoptes resume`. */
export async function driveRun(engine: Engine, runId: string, showProgress: boolean): Promise<Run> {
  const reporter = showProgress ? createProgressReporter() : undefined;
  const unsubscribe = engine.service.subscribe((e) => {
    if (e.type === 'run' && e.run.id === runId) reporter?.update(e.run as RunSummary);
  });
  const onSignal = () => {
    reporter?.stop();
    process.stderr.write(`\ninterrupted: run ${runId} is kept; \`panoptes resume\` finishes it\n`);
    void engine.scheduler.stop().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);
  try {
    // Records are scored as they land (when the run has scorers), and the run ends scored.
    engine.scoring.start();
    const run = await engine.scheduler.runToCompletion(runId);
    await engine.scoring.finish(runId);
    engine.service.events.flush();
    return run;
  } finally {
    reporter?.stop();
    unsubscribe();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
  }
}
