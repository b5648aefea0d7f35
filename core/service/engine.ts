/**
 * The engine assembled: store, catalog, router, local worker, pool, scheduler and the
 * ControlService over them. Every host (CLI, HTTP server, Electron main) opens it the same way.
 * Runs on: Node (core).
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { PanoptesError, type Run } from '../domain.js';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Catalog } from '../models/catalog.js';
import type { ModelClient } from '../models/model-client.js';
import { Router, type RouterOptions } from '../models/router/router.js';
import { databasePath, examplesDir, packageVersion } from '../paths.js';
import {
  FileTokenKeeper,
  WorkerListenerControl,
  type WorkerListenerControlOptions,
  type WorkerTokenKeeper,
} from '../remote/listener-control.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { Store } from '../store/store.js';
import { AttemptStore } from '../store/attempt-store.js';
import { ScoreStore } from '../store/score-store.js';
import { Scorekeeper } from '../scoring/scorekeeper.js';
import { judgeScorerBuilder } from '../scoring/judge/judge-builder.js';
import { ScorerAdmission } from '../scoring/scorer-admission.js';
import { ScorerRegistry } from '../scoring/scorer-registry.js';
import { checkCodeDefinition, codeScorerBuilder } from '../scoring/plugin/code-scorer.js';
import { logger as rootLogger } from '../telemetry.js';
import { LocalWorker } from '../workers/local-worker.js';
import { WorkerPool } from '../workers/worker-pool.js';
import type { ControlApi } from './contract.js';
import { ContractDispatcher, contractClient } from './contract-dispatcher.js';
import { ControlService } from './control-service.js';
import { EventHub, type EventListener } from './event-hub.js';
import { RunExports, type ExportKind } from './run-export.js';
import { ForeignWriteWatcher } from './foreign-writes.js';
import { estCostUsd } from '../common/cost.js';
import { loadCatalog } from './load-catalog.js';
import { stageJudgeOf, templateJudgeBilling } from './stage-judge.js';
import type { ConnectionCallsFactory } from '../remote/call-counting.js';
import { remoteCallLedgers } from './remote-call-ledger.js';
import { sweepBilling } from './sweep-billing.js';
import { modelCosts, priceUsage, retryCosts, summarizeRun } from './summaries.js';
import { ResponseScores } from '../store/response-scores.js';
import { scoringStatus, type ServiceScoring } from './scoring-status.js';
import { adaptiveRows } from './adaptive-rows.js';

export interface EngineOptions {
  dataDir: string;
  /** Catalog files layered over the embedded default (later ones win). */
  catalogPaths?: string[] | undefined;
  /** Run jobs in this process (default true; false: remote workers only). */
  local?: boolean | undefined;
  /** Model calls in flight in the local worker (default 8). */
  callConcurrency?: number | undefined;
  maxRuns?: number | undefined;
  maxAttempts?: number | undefined;
  tickMs?: number | undefined;
  /** How long a run's claim lasts without a write or a renewal before another process may take it over (default 30 s). */
  leaseMs?: number | undefined;
  /** How long a run keeps trying to write its responses.jsonl (a full disk) before it fails with the reason (default 2 min). */
  logPatienceMs?: number | undefined;
  /** How long scoring waits for room on a full disk before it stops with the reason (default 60 s). */
  scoringDiskPatienceMs?: number | undefined;
  /** How long a job waits for a worker serving its model to appear (default 0, or 30 s without a local worker). */
  waitForWorkerMs?: number | undefined;
  /** Replaces the router (tests). */
  modelClient?: ModelClient | undefined;
  /** Router settings: profile, privacy lock, cache, cooldowns (see RouterOptions). */
  router?: Omit<RouterOptions, 'catalog' | 'store' | 'logger'> | undefined;
  /**
   * Where the worker listener's token is kept (default: `<dataDir>/worker-token`, owner-only; the
   * desktop app passes the OS keychain).
   */
  workerTokenKeeper?: WorkerTokenKeeper | undefined;
  /** Listener settings for the app's worker listener other than address and token (tests shorten heartbeats). */
  workerListener?: WorkerListenerControlOptions['listener'] | undefined;
  /**
   * The folders a pairwise judge's baseline file must still be in when scoring reads it again (by
   * the real path of the file opened): a server's manifest roots, which held it at attach. Absent
   * (the CLI, the app), any file its user names may be read.
   */
  baselineRoots?: readonly string[] | undefined;
  /** Lets scorers that ask for the `network` capability (the url_health plugin) reach the network (default false). */
  allowPluginNetwork?: boolean | undefined;
  /**
   * Open the database read-only, for commands that only read (runs, stats, export, report): they
   * work in a read-only data folder. Nothing is cleaned, started or written; no local worker.
   */
  readonly?: boolean | undefined;
  /** better-sqlite3 addon to load instead of node_modules' Node build (Electron passes its own ABI's). */
  nativeBinding?: string | undefined;
  logger?: Logger | undefined;
}

/** The contract in-process (every call validated once by the dispatcher), its events, and a run's export lines. */
export interface EngineService extends ControlApi {
  subscribe(listener: EventListener): () => void;
  exportLines(runId: string, format: ExportKind): Iterable<string>;
}

export interface Engine {
  service: EngineService;
  /** Serves the contract to the transports (IPC, the browser bridge, the HTTP API). */
  dispatcher: ContractDispatcher;
  /** Publishes the contract's events (coalesced; `flush` publishes what waits at once). */
  events: EventHub;
  scheduler: Scheduler;
  store: Store;
  pool: WorkerPool;
  /** Counts each remote worker connection's billed calls in the run's ledger (what a worker listener is given). */
  remoteCalls: ConnectionCallsFactory;
  catalog: Catalog;
  modelClient: ModelClient;
  router: Router;
  /** Scores records as they land and re-scores stored runs; `start()` it where the scheduler runs. */
  scoring: Scorekeeper;
  /** Scorer builders by kind, and the scores they stored (what the worker reads and writes). */
  scorerRegistry: ScorerRegistry;
  scores: ScoreStore;
  /** The listener for remote workers, off until started (by the app, or by the desktop's settings). */
  listener: WorkerListenerControl;
  dataDir: string;
  /**
   * Puts the runs whose owner is gone (a killed process) back in the queue, so the scheduler takes
   * them up; returns every unfinished run, queued or running, those included.
   */
  recoverInterruptedRuns(): string[];
  // What a host (the CLI, the server, the desktop app) does with the engine, beside serving the contract.
  /** Takes up queued and interrupted runs in this process, and scores records as they land. */
  start(): void;
  /** Drives one run to its end in this process, scored when it has scorers, its last events published. */
  runToEnd(runId: string): Promise<Run>;
  /** Drives every run this process took up to its end, then finishes scoring `scored`. */
  finishAll(scored: Iterable<string>): Promise<void>;
  /** Whether another process took the run over while this one drove it. */
  lostRun(runId: string): boolean;
  /** Stops taking up runs; a run in progress goes back to the queue for the next start. */
  stopRuns(): Promise<void>;
  /** Stops everything and closes the store; a second call waits for the first and does nothing more. */
  close(): Promise<void>;
}

/** A folder this process cannot write is said in one line naming it, before anything is opened. */
function assertWritableDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true });
    accessSync(dataDir, constants.W_OK);
    const db = databasePath(dataDir);
    if (existsSync(db)) accessSync(db, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new PanoptesError(
      'invalid_input',
      `the data folder ${dataDir} is read-only (${code}); this command writes to it (runs, stats, export and report only read, and still work)`,
      { where: dataDir, cause: err },
    );
  }
}

export function openEngine(opts: EngineOptions): Engine {
  const readonly = opts.readonly ?? false;
  if (!readonly) assertWritableDataDir(opts.dataDir);
  const logger = opts.logger ?? rootLogger();
  const catalog = loadCatalog(opts.dataDir, opts.catalogPaths);
  const store = new Store(databasePath(opts.dataDir), {
    readonly,
    nativeBinding: opts.nativeBinding,
  });
  if (!readonly) store.runs.discardAbandonedStaging();
  const local = !readonly && (opts.local ?? true);
  const pool = new WorkerPool({ waitForWorkerMs: opts.waitForWorkerMs ?? (local ? 0 : 30_000) });
  // Read-only, the router keeps its advisory rows (metrics, cache, budget) in memory: it prunes the store's on start.
  const router = new Router({ catalog, ...(readonly ? {} : { store: store.router }), logger, ...opts.router });
  const modelClient = opts.modelClient ?? router;
  const registry = new ScorerRegistry();
  registry.register('judge', judgeScorerBuilder({ client: modelClient, catalog, baselineRoots: opts.baselineRoots }));
  const grants = { network: opts.allowPluginNetwork ?? false };
  registry.register('code', codeScorerBuilder(grants), checkCodeDefinition(grants));
  // One admission lets in every scorer: scoring files, stored versions, and the local worker's judge loops (billed to the run).
  const admission = new ScorerAdmission(registry, local ? templateJudgeBilling(store) : undefined);
  if (local) {
    pool.add(
      new LocalWorker({
        client: sweepBilling(store, catalog)(modelClient),
        callConcurrency: opts.callConcurrency,
        stageJudge: stageJudgeOf(admission),
      }),
    );
  }
  const scores = new ScoreStore(store);
  // Pages committed by the worker become `scoring` events through the hub (built next).
  const attempts = new AttemptStore(store);
  // Retries of hard fails are the candidate's own calls: through the same client as the sweep's.
  const worker = new Scorekeeper({
    store,
    scores,
    admission,
    logger,
    retries: { client: modelClient, attempts },
    onProgress: (id) => events.scoringChanged(id),
    // The same lease as runs' (PANOPTES_LEASE_MS): how long a stalled scorer's claim outlives it.
    ...(opts.leaseMs === undefined ? {} : { leaseMs: opts.leaseMs }),
    ...(opts.scoringDiskPatienceMs === undefined ? {} : { diskFullPatienceMs: opts.scoringDiskPatienceMs }),
  });
  const scoring: ServiceScoring = {
    admission,
    scores,
    worker,
    attempts,
    judgeUsage: (id) => scores.judgeUsage(id).map((u) => priceUsage(u, catalog)),
    retryUsage: (id) => retryCosts(store, attempts, catalog, id),
  };
  const events = new EventHub({
    run: (id) => {
      const run = store.queries.getRun(id);
      return run ? summarizeRun(store, catalog, run) : null;
    },
    job: (id) => store.queries.getJob(id),
    usage: (id) => modelCosts(store, catalog, id),
    workers: () => pool.list(),
    scoring: (id) => scoringStatus(store, scoring, id),
  });
  // Counts remote workers' billed calls: the app's listener and `--listen`'s share it.
  const remoteCalls = remoteCallLedgers(store);
  // The app's worker listener and the exports are built on first use: a one-shot `panoptes run` uses neither.
  let listenerControl: WorkerListenerControl | undefined;
  const listener = (): WorkerListenerControl =>
    (listenerControl ??= new WorkerListenerControl({
      pool,
      remoteCalls,
      keeper: opts.workerTokenKeeper ?? new FileTokenKeeper(join(opts.dataDir, 'worker-token')),
      logger,
      ...(opts.workerListener ? { listener: opts.workerListener } : {}),
    }));
  // Watches other processes' writes only while someone subscribes: a command that does not never starts it.
  const foreign = new ForeignWriteWatcher(store, events);
  const scheduler = new Scheduler({
    store,
    pool,
    dataDir: opts.dataDir,
    logger,
    events,
    maxRuns: opts.maxRuns,
    maxAttempts: opts.maxAttempts,
    tickMs: opts.tickMs,
    leaseMs: opts.leaseMs,
    logPatienceMs: opts.logPatienceMs,
    // The contract is built below; a batch is read only once a run is under way.
    adaptiveRows: adaptiveRows(worker, (): Pick<ControlApi, 'scoreMatrix'> => control),
  });
  let runExports: RunExports | undefined;
  const exports = (): RunExports =>
    (runExports ??= new RunExports(store.queries, scores, (runId) => {
      const prices = store.queries.runPrices(runId);
      return (r) => (r.cached ? 0 : estCostUsd(r.usage, prices?.[r.model] ?? catalog.priceOf(r.model)));
    }, new ResponseScores(store)));
  const control = new ControlService({
    exports,
    store,
    catalog,
    scheduler,
    pool,
    dataDir: opts.dataDir,
    events,
    router,
    scoring,
    listener,
    defaults: {
      exampleManifest: join(examplesDir(), 'demo-manifest.jsonl'),
      exampleScoring: readFileSync(join(examplesDir(), 'demo-scorers.json'), 'utf8'),
      defaultModels: ['mock-fast', 'mock-slow'],
      defaultEpochs: 3,
      version: packageVersion(),
    },
  });
  const dispatcher = new ContractDispatcher(control);
  let closing: Promise<void> | undefined;
  const service: EngineService = {
    ...contractClient(dispatcher),
    subscribe: (listener) => {
      const off = events.subscribe(listener);
      foreign.start();
      return () => {
        off();
        if (events.listenerCount === 0) foreign.stop();
      };
    },
    exportLines: (runId, format) => exports().lines(runId, format),
  };
  return {
    service,
    dispatcher,
    events,
    scheduler,
    store,
    pool,
    remoteCalls,
    catalog,
    modelClient,
    router,
    scoring: worker,
    scorerRegistry: registry,
    scores,
    get listener() {
      return listener();
    },
    dataDir: opts.dataDir,
    recoverInterruptedRuns() {
      const unfinished = new Set(store.queries.unfinishedRunIds());
      store.runs.recoverInterruptedRuns();
      for (const id of store.queries.unfinishedRunIds()) unfinished.add(id);
      return [...unfinished];
    },
    start() {
      scheduler.start();
      worker.start();
    },
    async runToEnd(runId) {
      worker.start();
      const run = await scheduler.runToCompletion(runId);
      await worker.finish(runId);
      events.flush();
      return run;
    },
    async finishAll(scored) {
      await scheduler.finishAll();
      for (const id of scored) await worker.finish(id);
    },
    lostRun: (runId) => scheduler.lostRun(runId),
    stopRuns: () => scheduler.stop(),
    close() {
      closing ??= (async () => {
        await listenerControl?.close();
        foreign.stop();
        await scheduler.stop();
        await worker.stop();
        events.close();
        await Promise.all(pool.handles().map((h) => h.close()));
        await router.close();
        store.close();
      })();
      return closing;
    },
  };
}
