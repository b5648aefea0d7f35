/**
 * ControlService: the one implementation of the contract. Every transport (IPC, the browser
 * bridge, the HTTP API, the CLI) reaches these methods through the ContractDispatcher, which has
 * validated the input with the contract's schema first (once): a method here trusts its input's
 * shape, and checks only what a schema cannot know (a model in the catalog, a run that exists).
 * Runs on: Node (core).
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { PanoptesError, type IndexedVignette, type PrivacyMode, type Run, type RunId, type RunOptions } from '../domain.js';
import { ISSUES_LISTED, checkManifest, manifestError } from '../manifest.js';
import { isEmptyTarget, refuseEmptyTarget } from './empty-targets.js';
import type { Catalog } from '../models/catalog.js';
import { nearestIds } from '../models/nearest-ids.js';
import { hostRefusingReasoning } from '../models/reasoning.js';
import { parseScoringConfig } from '../scoring/scorer-admission.js';
import { templateFrom } from '../templates/template-file.js';
import { effectivePrivacy } from '../models/router/privacy.js';
import type { Router } from '../models/router/router.js';
import type { WorkerListenerControl } from '../remote/listener-control.js';
import { responsesPath } from '../paths.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { Store } from '../store/store.js';
import type { WorkerInfo } from '../workers/worker-handle.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import {
  CONTRACT_INPUTS,
  type AppDefaults,
  type CatalogModelEntry,
  type ControlApi,
  type CreateRunInput,
  type ExportResult,
  type ManifestPreview,
  type MetricsReport,
  type ModelCost,
  type PostureReport,
  type ProbeReport,
  type RosterReport,
  type WorkerListenerStatus,
  type ResponsesPage,
  type RunDetail,
  type RunSummary,
  type DecisionReport,
  type GateResult,
  type Plan,
  type RunComparison,
  type ScoreReport,
  type ScoreDetail,
  type ScoreMatrixPage,
  type ScoringStatus,
  type StatsReport,
} from './contract.js';
import type { ValidInput } from './contract-dispatcher.js';
import type { EventHub } from './event-hub.js';
import { ManifestUploads } from './manifest-uploads.js';
import { RepositoryPacks } from './repository-packs.js';
import { InspectExport } from './inspect-export.js';
import { exportKindOf, type RunExports } from './run-export.js';
import { modelCosts, pricesForRun, statsReport, summarizeRun, summarizeRunsInTurns } from './summaries.js';
import { RunScoring } from './run-scoring.js';
import { ResponsePages } from './response-pages.js';
import { runAgainInput } from './run-again.js';
import { gateRuns } from './run-gate.js';
import { planSweep } from './run-plan.js';
import { decideRun, withDecision } from './run-decide.js';
import { reportHtmlOf } from './report-html.js';
import type { ServiceScoring } from './scoring-status.js';

export interface ControlServiceOptions {
  store: Store;
  catalog: Catalog;
  scheduler: Scheduler;
  pool: WorkerPool;
  dataDir: string;
  events: EventHub;
  /** The model router, whose metrics, posture, roster and probes the contract serves. */
  router: Pick<Router, 'metrics' | 'posture' | 'roster' | 'probe' | 'privacyLock'>;
  defaults: Omit<AppDefaults, 'dataDir'>;
  /** The listener for remote workers that the app turns on and off, built on first use. */
  listener: () => WorkerListenerControl;
  /** Vignettes copied into the store per transaction while creating a run (default 500). */
  stageBatch?: number;
  scoring: ServiceScoring;
  /** Where `exportRun` writes from, built on first use. */
  exports: () => RunExports;
}

export const DEFAULT_RUN_OPTIONS: RunOptions = {
  concurrency: 4,
  sampling: {},
  privacy: 'strict',
  skipPromptCache: false,
  shareCacheAcrossEpochs: false,
};

/** A run id: creation time in base 36 (so ids sort by age) and random bits. */
export function newRunId(): RunId {
  return `r${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

export class ControlService implements ControlApi {
  // What the contract's methods work on: the engine holds these; no caller reaches them through here.
  private readonly store: Store;
  private readonly catalogData: Catalog;
  private readonly scheduler: Scheduler;
  private readonly pool: WorkerPool;
  private readonly dataDir: string;
  private readonly events: EventHub;
  private readonly exports: () => RunExports;
  private readonly inspectExport: InspectExport;
  private readonly uploads: ManifestUploads;
  private readonly router: Pick<Router, 'metrics' | 'posture' | 'roster' | 'probe' | 'privacyLock'>;
  private readonly listener: () => WorkerListenerControl;
  private readonly appDefaults: AppDefaults;
  private readonly stageBatch: number;
  private readonly scoring: ServiceScoring;
  private readonly runScoring: RunScoring;
  readonly reportHtml: ControlApi['reportHtml'] = (input) => reportHtmlOf(this, input);
  private readonly responsePages: ResponsePages;
  private readonly packs: RepositoryPacks;
  readonly packRepository: ControlApi['packRepository'] = (input) => this.packs.pack(input);
  readonly cancelPack: ControlApi['cancelPack'] = (input) => this.packs.cancel(input);

  constructor(opts: ControlServiceOptions) {
    this.store = opts.store;
    this.catalogData = opts.catalog;
    this.scheduler = opts.scheduler;
    this.pool = opts.pool;
    this.dataDir = opts.dataDir;
    this.appDefaults = { ...opts.defaults, dataDir: opts.dataDir };
    this.stageBatch = opts.stageBatch ?? 500;
    this.events = opts.events;
    this.router = opts.router;
    this.scoring = opts.scoring;
    this.runScoring = new RunScoring({ store: opts.store, catalog: opts.catalog, events: opts.events, router: opts.router, scoring: opts.scoring });
    this.exports = opts.exports;
    this.responsePages = new ResponsePages({ store: opts.store, scores: opts.scoring.scores, catalog: opts.catalog });
    this.inspectExport = new InspectExport({
      queries: opts.store.queries,
      scores: opts.scoring.scores,
      variants: opts.scoring.scores.variants,
      report: (run, scorer) => this.runScoring.report(run, { runId: run.id, scorer }),
      panoptesVersion: opts.defaults.version,
    });
    this.uploads = new ManifestUploads(opts.dataDir);
    this.packs = new RepositoryPacks({ catalog: opts.catalog, uploads: this.uploads });
    this.listener = opts.listener;
    this.pool.on('changed', () => this.events.workersChanged());
  }

  // ---- Runs ------------------------------------------------------------------------------------

  async createRun(input: ValidInput<'createRun'>): Promise<Run> {
    input.models.forEach((model, i) => {
      if (!this.catalogData.has(model)) {
        throw new PanoptesError(
          'invalid_input',
          `models[${i}]: unknown model "${model}"; did you mean ${nearestIds(model, this.catalogData.modelIds())
            .map((id) => `"${id}"`)
            .join(' or ')}?`,
          { where: `models[${i}]` },
        );
      }
    });
    input.models.forEach((model, i) => {
      const host = hostRefusingReasoning(this.catalogData, model, input.sampling);
      if (host !== undefined) {
        throw new PanoptesError('invalid_input', `models[${i}]: host ${host} of "${model}" takes no reasoning settings (its catalog entry says takesReasoning: false); drop reasoningEffort and thinkingBudget for it`, {
          where: 'sampling',
        });
      }
    });
    // Scorers are admitted (built and checked, so a bad one is refused) before anything is stored.
    const scorers = input.scorers && (await this.runScoring.admit(input.scorers, input.models, input.privacy ?? DEFAULT_RUN_OPTIONS.privacy, 'the run'));
    const privacy = effectivePrivacy(input.privacy ?? DEFAULT_RUN_OPTIONS.privacy, this.router.privacyLock);
    if (privacy === 'strict') {
      // Refused here, naming the model, rather than accepted to fail every call.
      input.models.forEach((model, i) => {
        if (!this.catalogData.hosts(model).some((h) => h.privacySafe)) {
          throw new PanoptesError(
            'invalid_input',
            `models[${i}]: "${model}" has no privacy-safe host (every host may train on or log prompts), and strict privacy refuses them${this.router.privacyLock === 'strict' ? ' (this instance is locked to strict)' : '; choose privacy "fallback" or "off" to allow them'}`,
            { where: `models[${i}]` },
          );
        }
      });
    }
    // A template is checked (with its line) before the manifest is read, and its judge loop's scorers built.
    const template = input.template === undefined ? undefined : templateFrom(input.template, 'template');
    const judged = template?.stages.at(-1)?.judge;
    if (judged) await this.scoring.admission.admit(parseScoringConfig({ scorers: judged.scorers }));
    const manifestPath = resolve(input.manifestPath);
    const options: RunOptions = {
      concurrency: input.concurrency ?? DEFAULT_RUN_OPTIONS.concurrency,
      sampling: input.sampling ?? {},
      privacy: input.privacy ?? DEFAULT_RUN_OPTIONS.privacy,
      skipPromptCache: input.skipPromptCache ?? false,
      shareCacheAcrossEpochs: input.shareCacheAcrossEpochs ?? false,
      ...(input.endWithFailures === undefined ? {} : { endWithFailures: input.endWithFailures }),
      ...(template ? { template } : {}),
      ...(input.untilDecided ? { untilDecided: input.untilDecided } : {}),
    };
    // One read of the manifest checks it and copies it in; a failed check discards the copy.
    const runId = newRunId();
    this.store.runs.beginStaging(runId);
    let count = 0;
    try {
      let emptyTarget: { idx: number; id: string } | null = null;
      let batch: IndexedVignette[] = [];
      const check = await checkManifest(manifestPath, {
        previewCount: 0,
        maxIssues: ISSUES_LISTED,
        onVignette: async (v) => {
          if (emptyTarget === null && isEmptyTarget(v.target)) emptyTarget = { idx: v.index, id: v.id };
          batch.push(v);
          if (batch.length < this.stageBatch) return;
          this.store.runs.stageVignettes(runId, batch);
          batch = [];
          // Let running sweeps and the UI breathe between batches of a large manifest.
          await new Promise<void>((r) => setImmediate(r));
        },
      });
      if (check.issues.length > 0) throw manifestError(check);
      this.store.runs.stageVignettes(runId, batch);
      count = check.count;
      if (scorers) await refuseEmptyTarget(scorers.config, emptyTarget, manifestPath);
      if (input.probe) await this.probeBeforeRun(input.models, input.privacy ?? DEFAULT_RUN_OPTIONS.privacy);
    } catch (err) {
      this.store.runs.discardStaging(runId);
      throw err;
    }
    const run = this.store.runs.insertRun({
      id: runId,
      manifestPath,
      models: input.models,
      epochs: input.epochs,
      vignetteCount: count,
      options,
      prices: pricesForRun(this.catalogData, input.models),
      name: input.name,
    });
    if (scorers) this.runScoring.attach(run, scorers);
    this.events.runChanged(run.id);
    this.scheduler.wake();
    return run;
  }

  async listRuns(input: ValidInput<'listRuns'> = {}): Promise<RunSummary[]> {
    return summarizeRunsInTurns(this.store, this.catalogData, this.store.queries.listRuns(input));
  }

  async getRun({ runId }: ValidInput<'getRun'>): Promise<RunDetail> {
    const run = this.requireRun(runId);
    return {
      run: this.summarize(run),
      jobs: this.store.queries.jobs(runId),
      usage: this.costs(runId),
      failures: this.store.queries.vignetteFailures(runId, 1000),
      responsesPath: responsesPath(this.dataDir, runId),
    };
  }

  async cancelRun({ runId }: ValidInput<'cancelRun'>): Promise<Run> {
    this.requireRun(runId);
    return this.scheduler.cancel(runId);
  }

  async describeRun({ runId, ...change }: ValidInput<'describeRun'>): Promise<Run> {
    this.requireRun(runId);
    const run = this.store.runs.describeRun(runId, change);
    this.events.runChanged(runId);
    return run;
  }

  /** Deletes a finished run's rows (fenced in the store), then its folder (responses.jsonl). */
  async deleteRun({ runId }: ValidInput<'deleteRun'>): Promise<Run> {
    const run = this.store.removal.deleteRun(runId);
    await rm(dirname(responsesPath(this.dataDir, runId)), { recursive: true, force: true });
    return run;
  }

  async retryRun({ runId, scope }: ValidInput<'retryRun'>): Promise<Run> {
    const run = this.requireRun(runId);
    // The whole run again is a new run; the old one keeps its records (and responses.jsonl) as they are.
    if (scope === 'all') return this.createRun(CONTRACT_INPUTS.createRun.parse(runAgainInput(run, this.scoring.scores.runScorers(runId))));
    const retried = this.store.runs.retryFailedJobs(runId);
    for (const job of this.store.queries.jobs(runId)) this.events.jobChanged(runId, job.id);
    this.events.runChanged(runId);
    this.scheduler.wake();
    return retried;
  }

  /** What Run again would create, for New run to show filled in. */
  async runDraft({ runId }: ValidInput<'runDraft'>): Promise<CreateRunInput> {
    return runAgainInput(this.requireRun(runId), this.scoring.scores.runScorers(runId));
  }

  async responses(input: ValidInput<'responses'>): Promise<ResponsesPage> {
    this.requireRun(input.runId);
    return this.responsePages.page(input);
  }

  async stats(input: ValidInput<'stats'> = {}): Promise<StatsReport> {
    if (input.runId !== undefined) this.requireRun(input.runId);
    return statsReport(this.store, this.scoring.attempts, this.catalogData, input.runId);
  }

  /** Writes a run's records (or its scores) to a file, one line per record, or its inspect_ai logs to a folder; atomic via rename. */
  async exportRun(input: ValidInput<'exportRun'>): Promise<ExportResult> {
    const run = this.requireRun(input.runId);
    if (input.format === 'inspect') return this.inspectExport.write(run, input.outPath);
    return this.exports().write(input.runId, exportKindOf(input.format, input.scores === true), input.outPath);
  }

  // ---- Scoring (RunScoring's, on runs that exist) ---------------------------------------------------

  async scoreRun(input: ValidInput<'scoreRun'>): Promise<ScoringStatus> {
    return this.runScoring.scoreRun(this.requireRun(input.runId), input);
  }

  async scoringStatus({ runId }: ValidInput<'scoringStatus'>): Promise<ScoringStatus> {
    this.requireRun(runId);
    return this.runScoring.status(runId);
  }

  async report(input: ValidInput<'report'>): Promise<ScoreReport> {
    return withDecision(this, this.requireRun(input.runId), (run) => this.runScoring.report(run, input));
  }

  async compareRuns(input: ValidInput<'compareRuns'>): Promise<RunComparison> {
    return this.runScoring.compareRuns(this.requireRun(input.runA, 'runA'), this.requireRun(input.runB, 'runB'), input);
  }

  async flippedVignettes(input: ValidInput<'flippedVignettes'>): ReturnType<RunScoring['flippedVignettes']> {
    return this.runScoring.flippedVignettes(this.requireRun(input.runA, 'runA'), this.requireRun(input.runB, 'runB'), input);
  }

  async scoreMatrix(input: ValidInput<'scoreMatrix'>): Promise<ScoreMatrixPage> {
    return this.runScoring.scoreMatrix(this.requireRun(input.runId), input);
  }

  async scoreDetail(input: ValidInput<'scoreDetail'>): Promise<ScoreDetail> {
    return this.runScoring.scoreDetail(this.requireRun(input.runId), input);
  }

  async gate(input: ValidInput<'gate'>): Promise<GateResult> {
    return gateRuns(this, input);
  }

  async plan(input: ValidInput<'plan'>): Promise<Plan> {
    return planSweep(this, this.catalogData, input);
  }

  async decide(input: ValidInput<'decide'>): Promise<DecisionReport> {
    return decideRun(this, input);
  }

  // ---- Catalog, manifests, workers ---------------------------------------------------------------

  async catalog(): Promise<CatalogModelEntry[]> {
    return this.catalogData.modelIds().map((id) => {
      const hosts = this.catalogData.hosts(id);
      const price = this.catalogData.priceOf(id);
      return {
        id,
        label: this.catalogData.data.models[id]?.label ?? id,
        hosts: hosts.map((h) => ({
          id: h.id,
          provider: h.provider,
          kind: h.providerConfig.kind,
          contextWindow: h.contextWindow,
          inputPerMTok: h.inputPerMTok ?? null,
          outputPerMTok: h.outputPerMTok ?? null,
          privacySafe: h.privacySafe,
        })),
        inputPerMTok: price.inputPerMTok,
        outputPerMTok: price.outputPerMTok,
        privacySafe: hosts.some((h) => h.privacySafe),
        available: this.pool.serves(id),
      };
    });
  }

  async checkManifest(input: ValidInput<'checkManifest'>): Promise<ManifestPreview> {
    let path: string;
    if (input.content !== undefined) {
      // An upload is kept so the run can read it like any other manifest.
      path = await this.uploads.keep(input.content, input.fileName);
    } else {
      path = resolve(input.path!);
    }
    const check = await checkManifest(path, { previewCount: 5, maxIssues: 50 });
    // An upload no run can use is not kept in the data folder.
    const kept = input.content === undefined || check.issues.length === 0;
    if (!kept) await this.uploads.discard(path);
    return {
      path,
      count: check.count,
      preview: check.preview,
      issues: check.issues,
      issueCount: check.issueCount,
      promptChars: check.promptChars,
      kept,
    };
  }

  async workers(): Promise<WorkerInfo[]> {
    return this.pool.list();
  }

  async defaults(): Promise<AppDefaults> {
    return this.appDefaults;
  }

  // ---- The model router ----------------------------------------------------------------------------

  async metrics(input: ValidInput<'metrics'> = {}): Promise<MetricsReport> {
    return this.router.metrics(input);
  }

  async posture(): Promise<PostureReport> {
    return this.router.posture();
  }

  async roster(): Promise<RosterReport> {
    return this.router.roster();
  }

  async probe(input: ValidInput<'probe'> = {}): Promise<ProbeReport> {
    return this.router.probe({ models: input.models });
  }

  /**
   * A sweep's `probe` option: every host of its models is probed, and the run is refused when a
   * model is left with no host its privacy mode may call (the error names each host's outcome).
   */
  private async probeBeforeRun(models: string[], privacy: PrivacyMode): Promise<void> {
    const report = await this.router.probe({ models });
    const posture = await this.router.posture();
    const strict = (posture.privacyLock ?? privacy) === 'strict';
    const dead = posture.models.filter((m) => models.includes(m.model) && !(strict ? m.privacySafeRoutable : m.routable));
    if (dead.length === 0) return;
    const why = dead
      .map((m) => {
        const outcomes = report.results.filter((r) => r.model === m.model).map((r) => `${r.host}: ${r.status}${r.message ? ` (${r.message})` : ''}`);
        return `"${m.model}": ${outcomes.join('; ')}`;
      })
      .join('; ');
    throw new PanoptesError('no_host', `the probe left no host to call for ${why}`, { where: 'models' });
  }

  // ---- The worker listener -----------------------------------------------------------------------

  async workerListener(): Promise<WorkerListenerStatus> {
    return this.listener().status();
  }

  async startWorkerListener(input: ValidInput<'startWorkerListener'> = {}): Promise<WorkerListenerStatus> {
    return this.listener().start(input);
  }

  async stopWorkerListener(): Promise<WorkerListenerStatus> {
    return this.listener().stop();
  }

  // ---- Helpers -----------------------------------------------------------------------------------

  private requireRun(runId: RunId, where = 'runId'): Run {
    const run = this.store.queries.getRun(runId);
    if (!run) throw new PanoptesError('not_found', `no run "${runId}"`, { where });
    return run;
  }

  private costs(runId?: RunId): ModelCost[] {
    return modelCosts(this.store, this.catalogData, runId);
  }

  private summarize(run: Run): RunSummary {
    return summarizeRun(this.store, this.catalogData, run);
  }
}
