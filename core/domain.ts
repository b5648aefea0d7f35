/**
 * The sweep's vocabulary, shared by every part of the engine and by every transport.
 * Runs on: Node (core). Imports nothing but types, so the renderer may import its types too.
 */

/** A run's id: sortable by creation time, safe in paths and URLs. */
export type RunId = string;
/** A job's id: the store's integer key, unique across every run of one database. */
export type JobId = number;

export type RunStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
export type JobStatus = 'pending' | 'running' | 'done' | 'failed' | 'cancelled';

/** Sampling parameters sent with every call and recorded with every response. */
/** Each field left out (or undefined, as a schema's output gives it) is the provider's default. */
export interface Sampling {
  temperature?: number | undefined;
  topP?: number | undefined;
  maxTokens?: number | undefined;
  seed?: number | undefined;
  stop?: string[] | undefined;
  /** How hard a reasoning model thinks: sent to OpenAI-compatible hosts as `reasoning_effort`. */
  reasoningEffort?: ReasoningEffort | undefined;
  /** Tokens an Anthropic model may spend thinking: sent as `thinking.budget_tokens`. */
  thinkingBudget?: number | undefined;
}

/**
 * A scorer's kind (the glossary's "scorer kind"): `pass_fail`, each verdict passes or fails, or
 * `graded`, a value in [0, 1]. Not its layer (rule, plugin, judge): a judge may be either kind.
 */
export type ScorerKind = 'pass_fail' | 'graded';
/** Where a scorer's verdicts come from: a rule, a code plugin, or a model judging. */
export type ScorerLayer = 'rule' | 'plugin' | 'judge';
/**
 * How a failed check counts: a hard fail makes the response unacceptable (and can trigger a retry
 * when the scorer asks for one); a soft flag only annotates it; none when the check passed or has
 * no notion of failing.
 */
export type Severity = 'hard' | 'soft' | 'none';
/** How hard a reasoning model thinks (OpenAI's `reasoning_effort`). */
export type ReasoningEffort = 'low' | 'medium' | 'high';
/** How a settled run with vignettes given up on ends. */
export type EndWithFailures = 'done' | 'failed';

/** Which attempt of each record a report reads: the sweep's own record, or the last retry on a hard fail. */
export type ReportAttempt = 'first' | 'final';

/** How the router treats hosts that train on or log prompts (the privacy router of the model-gateway design). */
export type PrivacyMode = 'strict' | 'fallback' | 'off';

/** Per-run choices that travel with every job of the run. */
export interface RunOptions {
  /** Jobs of this run in flight at once (default 4). */
  concurrency: number;
  sampling: Sampling;
  privacy: PrivacyMode;
  /**
   * Skip the prompt cache: no answer is read from it and none is written to it. The run's own
   * records (the database and responses.jsonl, prompts and responses) are kept as always: they are
   * the product. Metrics never hold prompt or response text, with or without it.
   */
  skipPromptCache: boolean;
  /** Let the prompt cache answer epoch N with epoch M's response (off: epochs are independent samples). */
  shareCacheAcrossEpochs: boolean;
  /**
   * How a run whose every job settled ends when some vignettes were given up on: `failed` (the
   * default) or `done`, the failures counted and listed either way.
   */
  endWithFailures?: EndWithFailures;
  /** A staged template: each vignette is posed through its stages, the last stage's answer is the record. */
  template?: StagedTemplate;
  /** Posed until decided: vignettes in a seeded order, a batch at a time, only to models still in contention. */
  untilDecided?: UntilDecided;
}

/**
 * How a run posed until decided goes: its vignettes in the order of `orderSeed` (fixed before any
 * answer), `batch` at a time to every model still in contention; after each batch every pair's
 * anytime-valid confidence sequence of `scorer` is updated, and a pair stops when it excludes 0
 * (decided) or lies inside ±`margin` (equivalent); alpha is split over the pairs.
 */
export interface UntilDecided {
  /** Absent: the run's first scorer. */
  scorer?: string | undefined;
  alpha: number;
  margin: number;
  orderSeed: number;
  batch: number;
  /**
   * A budget of the sweep's calls: a batch opens only while it fits beside the calls posed before
   * it (models in contention × its vignettes × epochs); absent, the manifest is the only bound.
   */
  maxCalls?: number | undefined;
}

/**
 * A staged template, checked (see core/templates): stages run in order; a stage's prompt may name
 * the vignette (`{{vignette.prompt}}`, `{{vignette.metadata.KEY}}`), an earlier stage's answer
 * (`{{stages.NAME}}`) and, in a fan-out stage, `{{item}}`: one call per item of the JSON array an
 * earlier stage answered. The last stage may carry a judge loop over scorer definitions.
 */
export interface StagedTemplate {
  name: string;
  stages: TemplateStage[];
}

export interface TemplateStage {
  name: string;
  prompt: string;
  fanOut?: string;
  /** The last stage only: scored with `scorers` (scoring-file definitions); a hard fail is posed again, up to `maxRounds` rounds. */
  judge?: { scorers: unknown[]; maxRounds: number };
}

/** One call of a staged record: which stage, which fan-out item and judge round, and what it answered and cost. */
export interface StageAnswer {
  stage: string;
  /** The fan-out item's index, or null for a stage without fan-out. */
  item: number | null;
  /** The judge round (1 for every stage without a judge loop). */
  round: number;
  response: string;
  usage: Usage;
  latencyMs: number;
  host: string;
  cached: boolean;
}

/** The options a job carries to its worker: the run's, less what only the scheduler reads. */
export type JobOptions = Omit<RunOptions, 'concurrency' | 'endWithFailures' | 'untilDecided'>;

/** Prices per million tokens for each model of a run, as they stood when the run was created. */
export type RunPrices = Record<string, { inputPerMTok: number; outputPerMTok: number }>;

/** A host every call of a job is waiting for: down (refusing connections) since `since`. */
export interface HostWait {
  host: string;
  since: number;
}

/** A vignette a run gave up on after its attempts, with the last error. */
export interface VignetteFailure {
  jobId: JobId;
  vignetteId: string;
  vignetteIndex: number;
  model: string;
  epoch: number;
  attempts: number;
  code: string;
  message: string;
  at: number;
}

/** One turn of a conversation a vignette poses. */
export interface ChatTurn {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * One line of a manifest: an id and the exact prompt to pose. A chat vignette gives `messages`, a
 * conversation ending with a user turn, and its `prompt` is that last user turn (what lists,
 * judges and plugins show as its question).
 */
export interface Vignette {
  id: string;
  prompt: string;
  system?: string;
  messages?: ChatTurn[];
  target?: string;
  metadata?: Record<string, unknown>;
}

/** A vignette as a run stores it: with its position in the manifest (1-based line order). */
export interface IndexedVignette extends Vignette {
  index: number;
}

/** A vignette as a job poses it: with the calls of its staged template that finished before the job was interrupted. */
export interface JobVignette extends IndexedVignette {
  /** In call order; the template is posed from the first call after them. */
  finishedStages?: StageAnswer[];
}

/** The top-level sweep: every vignette x every model x `epochs` repeats. */
export interface Run {
  id: RunId;
  manifestPath: string;
  models: string[];
  epochs: number;
  vignetteCount: number;
  status: RunStatus;
  jobCount: number;
  doneCount: number;
  failedCount: number;
  options: RunOptions;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  error: string | null;
  /** What the user called it (null: no name given; lists then show the id). */
  name: string | null;
  notes: string | null;
  tags: string[];
  /** When it was archived (hidden from lists unless asked for); null when it is not. */
  archivedAt: number | null;
  /**
   * Times it went back to queued after starting or ending (retry, resume, takeover). Its status
   * moves backwards then, so two snapshots of a run are ordered by this first.
   */
  restarts: number;
}

/** One (model, epoch) slice of a run, dispatched to one worker at a time. */
export interface Job {
  id: JobId;
  runId: RunId;
  model: string;
  epoch: number;
  status: JobStatus;
  attempt: number;
  workerId: string | null;
  /** Vignettes of this job whose records have landed. */
  vignettesDone: number;
  vignetteCount: number;
  usage: Usage;
  startedAt: number | null;
  finishedAt: number | null;
  error: string | null;
  /** Set while the job's calls wait for a host that is down: shown live as "waiting for host". */
  waitingForHost: HostWait | null;
}

/** The unit that fans out to a worker: the vignettes still to pose, bound to one model at one epoch. */
export interface EvalJob {
  jobId: JobId;
  runId: RunId;
  model: string;
  epoch: number;
  /**
   * In index order, read as the worker iterates (a page at a time from the store): a job of a
   * million vignettes is never held in memory whole. Iterate it once. A run posed until decided
   * gives an async source instead, in its seeded order, that waits between batches for the
   * decision (only a local worker takes it).
   */
  vignettes: Iterable<JobVignette> | AsyncIterable<JobVignette>;
  /** How many `vignettes` yields (a source posed until decided: at most this many). */
  vignetteCount: number;
  options: JobOptions;
}

/** Calls a provider billed without an answer to show for them, and their tokens. */
export interface BilledTries {
  calls: number;
  inputTokens: number;
  outputTokens: number;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens the provider served from its own prompt cache, where reported. */
  cachedTokens?: number | undefined;
  /** Output tokens spent on hidden reasoning, where reported. */
  reasoningTokens?: number | undefined;
}

/** One model call's result: what was asked, what came back, what it cost. */
export interface ResponseRecord {
  runId: RunId;
  jobId: JobId;
  vignetteId: string;
  vignetteIndex: number;
  model: string;
  epoch: number;
  prompt: string;
  system?: string;
  /** A chat vignette's conversation, as posed. */
  messages?: ChatTurn[];
  response: string;
  usage: Usage;
  latencyMs: number;
  /** The physical host that answered: `provider/model-id`. */
  host: string;
  cached: boolean;
  sampling: Sampling;
  finishedAt: number;
  /** Why the answer ended, in the provider's own word (`stop`, `length`, `end_turn`, `max_tokens`, ...), where it said. */
  finishReason?: string;
  /** The vignette's expected answer and metadata, as the manifest gave them: every record line carries them. */
  target?: string;
  metadata?: Record<string, unknown>;
  /** A staged template's record: every call behind the answer, in order (the answer is the last). */
  stages?: StageAnswer[];
}

/** What a worker reports when a job ends well. Records were streamed to the sink as they came. */
export interface JobOutcome {
  jobId: JobId;
  attempt: number;
  workerId: string;
  vignettesDone: number;
  usage: Usage;
}

/** Token totals for one model across every recorded response: the `/stats` accounting. */
export interface ModelUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Model calls: one per record, not per job. */
  calls: number;
  /** Of `calls`, those answered from the prompt cache; their tokens are not in the billed totals above. */
  cachedCalls: number;
  /** Tokens the cached answers carry (what those calls would have cost had they gone to a provider). */
  cachedInputTokens: number;
  cachedOutputTokens: number;
}

/** A stored response, as listed and exported. */
export interface StoredResponse extends ResponseRecord {
  seq: number;
}

export type ErrorCode =
  | 'invalid_input'
  | 'manifest_invalid'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'server_error'
  | 'timeout'
  | 'connection'
  | 'empty_output'
  | 'auth'
  | 'quota'
  | 'bad_request'
  | 'privacy_blocked'
  | 'no_host'
  | 'budget_exceeded'
  | 'worker_lost'
  | 'cancelled'
  /** The disk holding the database has no room for a write (SQLITE_FULL): nothing was stored. */
  | 'disk_full'
  | 'internal';

/** Every error the engine raises on purpose: a code, whether retrying could help, and where. */
export class PanoptesError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  /** For rate limits: milliseconds until the failing host may be tried again. */
  readonly retryAfterMs: number | undefined;
  /** Where the problem is: a field name, `file:line`, a frame. */
  readonly where: string | undefined;
  /**
   * Calls a provider billed on the way to this error (an empty answer still carries its tokens),
   * set by the router, so every accountant counts what was paid for although no answer came.
   */
  billed: BilledTries | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { retryable?: boolean | undefined; retryAfterMs?: number | undefined; where?: string | undefined; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'PanoptesError';
    this.code = code;
    this.retryable = opts.retryable ?? false;
    this.retryAfterMs = opts.retryAfterMs;
    this.where = opts.where;
    this.billed = undefined;
  }

  toJSON(): SerializedError {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.where === undefined ? {} : { where: this.where }),
      ...(this.retryAfterMs === undefined ? {} : { retryAfterMs: this.retryAfterMs }),
    };
  }
}

/** An error as it crosses a process or transport boundary. */
export interface SerializedError {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  where?: string;
  retryAfterMs?: number;
}

export function toPanoptesError(err: unknown): PanoptesError {
  if (err instanceof PanoptesError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new PanoptesError('internal', message, { cause: err });
}

/**
 * An error as every transport of the contract sends it. An internal error's message may hold paths
 * or SQL, so it travels as "internal error"; the transport logs the original.
 */
export function wireError(err: unknown): SerializedError {
  const e = toPanoptesError(err);
  return e.code === 'internal' ? { ...e.toJSON(), message: 'internal error' } : e.toJSON();
}

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0 };
}

export function addUsage(into: Usage, u: Usage): void {
  into.inputTokens += u.inputTokens;
  into.outputTokens += u.outputTokens;
  if (u.cachedTokens) into.cachedTokens = (into.cachedTokens ?? 0) + u.cachedTokens;
  if (u.reasoningTokens) into.reasoningTokens = (into.reasoningTokens ?? 0) + u.reasoningTokens;
}

export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['done', 'failed', 'cancelled'];
