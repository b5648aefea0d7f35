/**
 * The contract: every request the engine answers and every event it pushes, typed once. Electron's
 * IPC, the browser bridge (HTTP + WebSocket), the HTTP API and the CLI all serve exactly this,
 * through one ContractDispatcher. Inputs are zod schemas because the dispatcher validates what
 * crosses any transport, once, with them; outputs are plain types.
 * The renderer imports this file's types only (`import type`), never its values. Its costs
 * (contract-costs.ts) and its scoring part (contract-scoring.ts) live in files of their own and are
 * re-exported here, so every importer names this file alone.
 * Runs on: Node (core); types shared with the renderer.
 */
import { z } from 'zod';
import { CONCURRENCY, EPOCHS, RUN_NAME_MAX, RUN_NOTES_MAX } from '../common/input-bounds.js';
import type {
  ChatTurn,
  HostWait,
  Job,
  JobStatus,
  ModelUsage,
  PrivacyMode,
  Run,
  RunStatus,
  SerializedError,
  StoredResponse,
  Vignette,
  VignetteFailure,
} from '../domain.js';
import type {
  CallAggregate,
  CallMetric,
  HostPosture,
  HostState,
  MetricsReport,
  ModelPosture,
  PostureReport,
  ProbeOutcome,
  ProbeReport,
  ProbeResult,
  ProfileAggregate,
  RosterHost,
  RosterModel,
  RosterReport,
} from '../models/router/router-report.js';
import type { ManifestIssue } from '../manifest.js';
import { SamplingSchema } from '../models/sampling.js';
import type { WorkerListenerStatus } from '../remote/listener-control.js';
import type { WorkerInfo } from '../workers/worker-handle.js';
import type { Severity } from '../scoring/scorer.js';
import type { EpochReducer, ModelScore, PairComparison, RunComparison, ScoreReport } from '../scoring/report-shape.js';
import { ScoringConfigSchema, type ScorerDefinition, type ScoringConfig } from '../scoring/scoring-config.js';
import type { MatrixSort, ScoreMatrixCell, ScoreMatrixPage, ScoreMatrixRow } from '../scoring/score-matrix.js';
import type { ModelCost, PricedResponse, RunScoringCosts, StatsReport } from './contract-costs.js';
import { FlippedVignettesInputSchema, type FlippedVignettes, type FlippedVignettesInput, type ModelFlips } from './contract-flips.js';
import { ResponseSearchFields, type ResponseScoreCell, type ResponseScorerColumn, type ScoredResponse } from './contract-responses.js';
import {
  CompareRunsInputSchema,
  ReportHtmlInputSchema,
  ReportInputSchema,
  ScoreDetailInputSchema,
  ScoreMatrixInputSchema,
  ScoreRunInputSchema,
  type CompareRunsInput,
  type HtmlReportResult,
  type ReportHtmlInput,
  type ReportInput,
  type ScoreDetail,
  type ScoreDetailInput,
  type ScoreMatrixInput,
  type ScoreRunInput,
  type ScorerStatus,
  type ScoringStatus,
} from './contract-scoring.js';
import {
  DecideInputSchema,
  GateInputSchema,
  PlanInputSchema,
  UntilDecidedInputSchema,
  refineUntilDecided,
  type DecideInput,
  type DecisionReport,
  type GateInput,
  type GateLine,
  type GateResult,
  type PairDecision,
  type Plan,
  type PlanDesign,
  type PlanInput,
} from './contract-decide.js';

export type { ChatTurn, HostWait, Job, VignetteFailure, JobStatus, ModelUsage, PrivacyMode, Run, RunStatus, SerializedError, StoredResponse, Vignette, WorkerInfo };
export type { ManifestIssue };
export type { ReasoningEffort, ScorerKind, ScorerLayer } from '../domain.js';
export type { EpochReducer, ModelScore, PairComparison, RunComparison, ScoreReport, ScorerDefinition, ScoringConfig, Severity };
export type { MatrixSort, ScoreMatrixCell, ScoreMatrixPage, ScoreMatrixRow };
export { ScoringConfigSchema };
export type { CallAggregate, CallMetric, HostPosture, HostState, MetricsReport, ModelPosture, PostureReport };
export type { ProbeOutcome, ProbeReport, ProbeResult, ProfileAggregate, RosterHost, RosterModel, RosterReport };
export type { WorkerListenerStatus };
export { MetricsInputSchema, ProbeInputSchema, StartWorkerListenerInputSchema, type MetricsInput, type ProbeInput, type StartWorkerListenerInput } from './contract-host-inputs.js';
import { MetricsInputSchema, ProbeInputSchema, StartWorkerListenerInputSchema, type MetricsInput, type ProbeInput, type StartWorkerListenerInput } from './contract-host-inputs.js';
export type { ModelCost, PricedResponse, RunScoringCosts, StatsReport };
export { CancelPackInputSchema, PackRepositoryInputSchema, type CancelPackInput, type CancelPackResult, type PackRepositoryInput, type PackedVignetteSummary, type RepositoryPack } from './contract-pack.js';
import { CancelPackInputSchema, PackRepositoryInputSchema, type CancelPackInput, type CancelPackResult, type PackRepositoryInput, type RepositoryPack } from './contract-pack.js';
export type { ResponseScoreCell, ResponseScorerColumn, ScoredResponse };
export type { FlippedVignettes, FlippedVignettesInput, ModelFlips };
export { CompareRunsInputSchema, ReportHtmlInputSchema, ReportInputSchema, ScoreDetailInputSchema, ScoreMatrixInputSchema, ScoreRunInputSchema };
export { DecideInputSchema, GateInputSchema, PlanInputSchema, UntilDecidedInputSchema };
export type { DecideInput, DecisionReport, GateInput, GateLine, GateResult, PairDecision, Plan, PlanDesign, PlanInput };
export type { CompareRunsInput, HtmlReportResult, ReportHtmlInput, ReportInput, ScoreDetail, ScoreDetailInput, ScoreMatrixInput, ScoreRunInput, ScorerStatus, ScoringStatus };

// ---- Inputs ----------------------------------------------------------------------------------

export const CreateRunInputSchema = z
  .object({
    manifestPath: z.string().min(1, 'choose a manifest'),
    models: z
      .array(z.string().min(1))
      .min(1, 'choose at least one model')
      .refine((m) => new Set(m).size === m.length, 'each model at most once'),
    epochs: z.number().int('a whole number').min(EPOCHS.min, 'at least 1').max(EPOCHS.max),
    /** Jobs in flight at once for this run (default 4). */
    concurrency: z.number().int().min(CONCURRENCY.min).max(CONCURRENCY.max).optional(),
    sampling: SamplingSchema.optional(),
    privacy: z.enum(['strict', 'fallback', 'off']).optional(),
    /** Skip the prompt cache (no read, no write). The run's records are kept as always; metrics never hold text. */
    skipPromptCache: z.boolean().optional(),
    shareCacheAcrossEpochs: z.boolean().optional(),
    /** How the run ends when some vignettes were given up on: failed (default) or done, the failures listed either way. */
    endWithFailures: z.enum(['done', 'failed']).optional(),
    /** Probe every host of the run's models first, and refuse the run if a model has no host left to call. */
    probe: z.boolean().optional(),
    /** Scorers that score each record as it lands. */
    scorers: ScoringConfigSchema.optional(),
    /** What to call the run in lists and headers (its id otherwise); editable later. */
    name: z.string().trim().max(RUN_NAME_MAX).optional(),
    /**
     * A staged template: its YAML (or JSON) text, or a built-in's name (repo_audit, panel_debate,
     * design_doc, redteam). Each vignette is posed through its stages; the record is the last stage's answer.
     */
    template: z.string().min(1).max(1_000_000).optional(),
    /** Pose the vignettes in a seeded order, batch by batch, only to models still in contention, until every pair is decided. */
    untilDecided: UntilDecidedInputSchema.optional(),
  })
  .strict();
// The input side: defaults (untilDecided's) are filled in by the schema.
export type CreateRunInput = z.input<typeof CreateRunInputSchema>;

export const RunIdInputSchema = z.object({ runId: z.string().min(1).max(100) }).strict();
export type RunIdInput = z.infer<typeof RunIdInputSchema>;

export const RetryRunInputSchema = z
  .object({
    runId: z.string().min(1).max(100),
    /** `failed`: the failed and cancelled jobs again, in the same run; `all`: the whole run again, as a new run. */
    scope: z.enum(['failed', 'all']),
  })
  .strict();
export type RetryRunInput = z.infer<typeof RetryRunInputSchema>;

export const ListRunsInputSchema = z
  .object({
    limit: z.number().int().min(1).max(1000).optional(),
    status: z.enum(['queued', 'running', 'done', 'failed', 'cancelled']).optional(),
    /** Archived runs are hidden unless asked for: `include` lists them with the others, `only` alone. */
    archived: z.enum(['hide', 'include', 'only']).optional(),
    /** Words each found in the run's id, name, notes, tags or manifest path (any case). */
    search: z.string().max(200).optional(),
  })
  .strict();
export type ListRunsInput = z.infer<typeof ListRunsInputSchema>;

export const DescribeRunInputSchema = z
  .object({
    runId: z.string().min(1).max(100),
    /** Empty clears it. */
    name: z.string().trim().max(RUN_NAME_MAX).optional(),
    notes: z.string().max(RUN_NOTES_MAX).optional(),
    tags: z
      .array(z.string().trim().min(1, 'a tag is not empty').max(50).regex(/^[^,]+$/, 'a tag has no comma'))
      .max(20)
      .refine((t) => new Set(t).size === t.length, 'each tag at most once')
      .optional(),
    /** Archived runs are hidden from lists (and pruned by a retention, if one is set). */
    archived: z.boolean().optional(),
  })
  .strict();
export type DescribeRunInput = z.infer<typeof DescribeRunInputSchema>;

export const ResponsesInputSchema = z
  .object({
    runId: z.string().min(1),
    model: z.string().optional(),
    epoch: z.number().int().min(1).optional(),
    vignetteId: z.string().optional(),
    text: z.string().max(1000).optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    cursor: z.number().int().min(0).optional(),
    ...ResponseSearchFields,
  })
  .strict();
export type ResponsesInput = z.infer<typeof ResponsesInputSchema>;

export const StatsInputSchema = z.object({ runId: z.string().min(1).optional() }).strict();
export type StatsInput = z.infer<typeof StatsInputSchema>;

export const ExportInputSchema = z
  .object({
    runId: z.string().min(1),
    /** `inspect`: one inspect_ai EvalLog (`.json`, version 2) per model, written into the folder `outPath`; `scores`: one JSONL line per record, scorer, attempt and judge. */
    format: z.enum(['jsonl', 'csv', 'inspect', 'scores']).default('jsonl'),
    /** Where to write (Electron: from the save dialog); a folder for `inspect`. */
    outPath: z.string().min(1),
    /** With each record its scores: JSONL, a `scores` object keyed by scorer; CSV, a column per scorer. */
    scores: z.boolean().optional(),
  })
  .strict()
  .refine((v) => !(v.scores && v.format === 'inspect'), { message: 'scores export as JSONL or CSV', path: ['format'] });
export type ExportInput = z.input<typeof ExportInputSchema>;

export const CheckManifestInputSchema = z
  .object({
    path: z.string().min(1).optional(),
    /** The manifest's text, for a browser upload; stored in the data dir and checked there. */
    content: z.string().max(256 * 1024 * 1024).optional(),
    fileName: z.string().max(200).optional(),
  })
  .strict()
  .refine((v) => (v.path === undefined) !== (v.content === undefined), 'give either path or content');
export type CheckManifestInput = z.input<typeof CheckManifestInputSchema>;

export const EmptyInputSchema = z.object({}).strict().optional();

// ---- Outputs ---------------------------------------------------------------------------------

export interface ResponsesPage {
  items: ScoredResponse[];
  /** The score columns: every scorer version attached to the run. */
  scorers: ResponseScorerColumn[];
  /** Pass back as `cursor` for the next page; null at the end. */
  nextCursor: number | null;
  /** Pass back as `after` for the next page, in any order (keyset paging); null at the end. */
  nextAfter: number | null;
}

export interface RunSummary extends Run, RunScoringCosts {
  /** Vignettes given up on after their attempts (listed in the run's detail). */
  failedVignettes: number;
  /** Set while some job's calls wait for a host that is down: "waiting for host". */
  waitingForHost: HostWait | null;
  inputTokens: number;
  outputTokens: number;
  calls: number;
  estCostUsd: number;
  cachedCalls: number;
  cachedInputTokens: number;
  cachedOutputTokens: number;
  savedCostUsd: number;
}

export interface RunDetail {
  run: RunSummary;
  jobs: Job[];
  usage: ModelCost[];
  /** The vignettes given up on, each with its last error (the first 1,000; `run.failedVignettes` counts them all). */
  failures: VignetteFailure[];
  responsesPath: string;
}

export interface ManifestPreview {
  /** The path the run will read (for an upload: where it was stored). */
  path: string;
  count: number;
  preview: Vignette[];
  /** The first issues, in line order. */
  issues: ManifestIssue[];
  /** How many issues the file has in all. */
  issueCount: number;
  /** Characters of every vignette's prompt and system text, or of its conversation's turns (for the run's price estimate). */
  promptChars: number;
  /** An upload with issues is not kept: the path then names nothing, and the file must be fixed and uploaded again. */
  kept: boolean;
}

export interface CatalogHost {
  id: string;
  provider: string;
  kind: string;
  contextWindow: number;
  inputPerMTok: number | null;
  outputPerMTok: number | null;
  privacySafe: boolean;
}

export interface CatalogModelEntry {
  id: string;
  label: string;
  hosts: CatalogHost[];
  /** Price used for estimates: the first host's, else the flat fallback. */
  inputPerMTok: number;
  outputPerMTok: number;
  /** Some host neither trains on nor logs prompts. */
  privacySafe: boolean;
  /** A live worker (local or remote) can run it now. */
  available: boolean;
}

export interface ExportResult {
  /** The file written (the folder, for `inspect`). */
  path: string;
  /** Lines written (samples, for `inspect`). */
  lines: number;
  /** For `inspect`: the log files written, one per model. */
  files?: string[];
}

export interface AppDefaults {
  dataDir: string;
  exampleManifest: string;
  /** The example's scoring file, as text (the demo's scorers): the example run is scored, so its Results page has a leaderboard. */
  exampleScoring: string;
  defaultModels: string[];
  defaultEpochs: number;
  version: string;
}

// ---- The API ---------------------------------------------------------------------------------

/** Every request method, its input and its result. */
export interface ControlApi {
  createRun(input: CreateRunInput): Promise<Run>;
  listRuns(input?: ListRunsInput): Promise<RunSummary[]>;
  getRun(input: RunIdInput): Promise<RunDetail>;
  cancelRun(input: RunIdInput): Promise<Run>;
  /** Names a run, sets its notes and tags, archives it or brings it back. */
  describeRun(input: DescribeRunInput): Promise<Run>;
  /** Deletes a finished run for good: rows, scores and its folder (a queued or running one is refused: cancel it first). */
  deleteRun(input: RunIdInput): Promise<Run>;
  /** Retries a finished run: its failed and cancelled jobs (the same run, queued again), or all of it (a new run). */
  retryRun(input: RetryRunInput): Promise<Run>;
  /** What Run again would create (manifest, models, epochs, options, name, scorers), for New run to show filled in. */
  runDraft(input: RunIdInput): Promise<CreateRunInput>;
  responses(input: ResponsesInput): Promise<ResponsesPage>;
  stats(input?: StatsInput): Promise<StatsReport>;
  exportRun(input: ExportInput): Promise<ExportResult>;
  catalog(): Promise<CatalogModelEntry[]>;
  checkManifest(input: CheckManifestInput): Promise<ManifestPreview>;
  /** A folder, a .tar.gz or a git diff packed (as `panoptes pack` packs it) into a manifest kept in the data folder. */
  packRepository(input: PackRepositoryInput): Promise<RepositoryPack>;
  /** Stops a pack in flight, by the packId it was given. */
  cancelPack(input: CancelPackInput): Promise<CancelPackResult>;
  workers(): Promise<WorkerInfo[]>;
  defaults(): Promise<AppDefaults>;
  /** Recent model calls and per-provider/host aggregates (the router's metrics). */
  metrics(input?: MetricsInput): Promise<MetricsReport>;
  /** For each logical model: whether a privacy-safe host is routable now, and each host's state. */
  posture(): Promise<PostureReport>;
  /** Every logical model with its hosts, privacy class, health, cooldown, context window, price and frontier flag. */
  roster(): Promise<RosterReport>;
  /** One short call (16 output tokens) to every host of the models; failing hosts are marked. */
  probe(input?: ProbeInput): Promise<ProbeReport>;
  /** Attaches scorers to a run and scores its stored records (no model is called for the sweep). */
  scoreRun(input: ScoreRunInput): Promise<ScoringStatus>;
  /** Each scorer attached to the run: done, pending and failed records. */
  scoringStatus(input: RunIdInput): Promise<ScoringStatus>;
  /** Whether remote workers can connect, where, and the exact `panoptes worker` command to run. */
  workerListener(): Promise<WorkerListenerStatus>;
  /** Accepts `panoptes worker` connections at this address (the token is made once and kept). */
  startWorkerListener(input?: StartWorkerListenerInput): Promise<WorkerListenerStatus>;
  /** Stops accepting workers; connected ones are let go and their jobs move elsewhere. */
  stopWorkerListener(): Promise<WorkerListenerStatus>;
  /** The leaderboard with 95 % intervals, consistency across epochs and every pair of models compared. */
  report(input: ReportInput): Promise<ScoreReport>;
  /** The report as one self-contained HTML page (the leaderboard, pairs, consistency, judges and a vignette table): the page, or written to outPath. */
  reportHtml(input: ReportHtmlInput): Promise<HtmlReportResult>;
  /** Two runs of one manifest, paired by vignette id, model by model (diff = B - A). */
  compareRuns(input: CompareRunsInput): Promise<RunComparison>;
  /** Two runs of one manifest: the vignettes whose pass/fail verdict changed, per model (pass to fail, and back). */
  flippedVignettes(input: FlippedVignettesInput): Promise<FlippedVignettes>;
  /** A page of the vignette x model matrix of one scorer: per cell the reduced score, each epoch's, the flip rate and the judges' disagreement. */
  scoreMatrix(input: ScoreMatrixInput): Promise<ScoreMatrixPage>;
  /** One vignette's responses, every model and epoch, each with every score it got and the judges' rationale. */
  scoreDetail(input: ScoreDetailInput): Promise<ScoreDetail>;
  /** A head run against a base run of the same manifest, for CI: each scorer x model verdict and the decision (pass, worse, incomparable). */
  gate(input: GateInput): Promise<GateResult>;
  /** Before a sweep: the vignettes x epochs grid that detects a difference with the asked power, each design's cost and wall time. */
  plan(input: PlanInput): Promise<Plan>;
  /** A run's vignettes in a seeded order, every pair's anytime-valid confidence sequence: where each pair is decided, and what stopping there saves. */
  decide(input: DecideInput): Promise<DecisionReport>;
}

export type ControlMethod = keyof ControlApi;

/** Each method's input schema: the allowlist every transport serves, and its validator. */
export const CONTRACT_INPUTS = {
  createRun: CreateRunInputSchema.superRefine(refineUntilDecided),
  listRuns: ListRunsInputSchema.optional(),
  getRun: RunIdInputSchema,
  cancelRun: RunIdInputSchema,
  retryRun: RetryRunInputSchema,
  runDraft: RunIdInputSchema,
  describeRun: DescribeRunInputSchema,
  deleteRun: RunIdInputSchema,
  responses: ResponsesInputSchema,
  stats: StatsInputSchema.optional(),
  exportRun: ExportInputSchema,
  catalog: EmptyInputSchema,
  checkManifest: CheckManifestInputSchema,
  packRepository: PackRepositoryInputSchema,
  cancelPack: CancelPackInputSchema,
  workers: EmptyInputSchema,
  defaults: EmptyInputSchema,
  metrics: MetricsInputSchema.optional(),
  posture: EmptyInputSchema,
  roster: EmptyInputSchema,
  probe: ProbeInputSchema.optional(),
  scoreRun: ScoreRunInputSchema,
  scoringStatus: RunIdInputSchema,
  workerListener: EmptyInputSchema,
  startWorkerListener: StartWorkerListenerInputSchema.optional(),
  stopWorkerListener: EmptyInputSchema,
  report: ReportInputSchema,
  reportHtml: ReportHtmlInputSchema,
  compareRuns: CompareRunsInputSchema,
  flippedVignettes: FlippedVignettesInputSchema,
  scoreMatrix: ScoreMatrixInputSchema,
  scoreDetail: ScoreDetailInputSchema,
  gate: GateInputSchema,
  plan: PlanInputSchema,
  decide: DecideInputSchema,
} as const satisfies Record<ControlMethod, z.ZodType>;

export const CONTRACT_METHODS = Object.keys(CONTRACT_INPUTS) as ControlMethod[];

// ---- Events ----------------------------------------------------------------------------------

/** A run's state, its jobs that changed since the last event, and its usage so far. At most ~10 a second per run. */
export interface RunEvent {
  type: 'run';
  run: RunSummary;
  jobs: Job[];
  usage: ModelCost[];
}

export interface WorkersEvent {
  type: 'workers';
  workers: WorkerInfo[];
}

/** A run's scoring progress. At most ~10 a second per run. */
export interface ScoringEvent {
  type: 'scoring';
  status: ScoringStatus;
}

export type ControlEvent = RunEvent | WorkersEvent | ScoringEvent;

/** A result as it crosses a transport: errors travel as data, since IPC keeps only a message otherwise. */
export type Envelope<T> = { ok: true; value: T } | { ok: false; error: SerializedError };

// ---- The desktop bridge ------------------------------------------------------------------------

export type MethodInput<M extends ControlMethod> = Parameters<ControlApi[M]>[0];
export type MethodResult<M extends ControlMethod> = Awaited<ReturnType<ControlApi[M]>>;

/**
 * What Electron's preload exposes to the renderer as `window.panoptes`, and nothing more: the
 * contract (one IPC channel per method, errors as data), pushed events, and the native dialogs
 * only a desktop app has.
 */
export interface DesktopBridge {
  invoke<M extends ControlMethod>(method: M, input: MethodInput<M>): Promise<Envelope<MethodResult<M>>>;
  onEvent(listener: (event: ControlEvent) => void): () => void;
  /** The manifest file the user picked, or null when they cancelled. */
  chooseManifest(): Promise<string | null>;
  /** Where to save an export, or null when they cancelled. */
  chooseExportPath(defaultName: string): Promise<string | null>;
  /** Opens an http(s) link in the system browser (validated in the main process). */
  openExternal(url: string): Promise<void>;
}
