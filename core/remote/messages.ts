/**
 * The remote-worker protocol's messages: one zod schema per frame type, and the limits both ends
 * share. Envelope fields are snake_case (`job_id`, `worker_id`); the payloads they carry (a job's
 * options and vignettes, a record's usage) keep the engine's own shapes. Every frame is validated
 * on arrival, so nothing a peer sends reaches the engine unchecked.
 * Runs on: Node (core).
 */
import { z } from 'zod';
import type { ErrorCode } from '../domain.js';
import { SamplingSchema } from '../models/sampling.js';
import { CheckedTemplateSchema } from '../templates/template-file.js';
import { LatencySchema, RecordUsageSchema } from '../workers/answer-bounds.js';

/**
 * Bumped when a frame changes shape or a frame type is added; a coordinator refuses a worker that
 * speaks another one. 2: `gave_up` and `waiting`, and the job
 * options' cache flag named `skipPromptCache`. 3: a vignette's chat `messages`, and a record's
 * `finishReason`. 4: staged templates: the job options' `template`, a vignette's `target`,
 * `metadata` and `finishedStages`, a record's `stages`, and the `stage` frame.
 * 5: billed calls counted by the coordinator before they are made: `call_asked`, `call_ended`,
 * `call_counted` and `call_refused`.
 */
export const PROTOCOL_VERSION = 5;
/** Largest frame either end accepts once registered (configurable on the listener). */
export const DEFAULT_MAX_FRAME_BYTES = 8 * 1024 * 1024;
/** Largest frame a connection may send before it has registered. */
export const PRE_REGISTER_MAX_FRAME_BYTES = 4 * 1024;
/** Records or vignettes per frame, whatever their size. */
export const MAX_ITEMS_PER_FRAME = 512;

const ERROR_CODES = [
  'invalid_input', 'manifest_invalid', 'not_found', 'conflict', 'rate_limited', 'server_error', 'timeout',
  'connection', 'empty_output', 'auth', 'quota', 'bad_request', 'privacy_blocked', 'no_host', 'budget_exceeded',
  'worker_lost', 'cancelled', 'disk_full', 'internal',
] as const satisfies readonly ErrorCode[];
// Fails to compile when the domain gains an error code this list lacks.
const everyCodeListed: Exclude<ErrorCode, (typeof ERROR_CODES)[number]> extends never ? true : false = true;
void everyCodeListed;

const JobIdSchema = z.number().int().positive();
const AttemptSchema = z.number().int().positive();
const Count = z.number().int().nonnegative();

export const UsageSchema = z
  .object({
    inputTokens: Count,
    outputTokens: Count,
    cachedTokens: Count.optional(),
    reasoningTokens: Count.optional(),
  })
  .strict();

/** One call of a staged vignette's chain, as StageAnswer has it. */
export const WireStageSchema = z
  .object({
    stage: z.string().min(1).max(64),
    item: z.number().int().nonnegative().nullable(),
    round: z.number().int().min(1).max(5),
    response: z.string(),
    usage: RecordUsageSchema.strict(),
    latencyMs: LatencySchema,
    host: z.string().min(1).max(400),
    cached: z.boolean(),
  })
  .strict();
export type WireStage = z.infer<typeof WireStageSchema>;

/** Calls one staged vignette may carry: a judge loop's rounds on top of a fan-out's items. */
const MAX_STAGE_CALLS = 4096;

/** A vignette as a worker needs it: what to pose, and where it sits in the manifest. */
export const WireVignetteSchema = z
  .object({
    id: z.string().min(1),
    index: z.number().int().nonnegative(),
    prompt: z.string(),
    system: z.string().optional(),
    /** A chat vignette's conversation (the manifest checked its shape). */
    messages: z
      .array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() }).strict())
      .min(1)
      .optional(),
    /** What a staged template's placeholders and judge loop read of the vignette. */
    target: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    /** The calls of its staged chain that finished before the job was interrupted: posed again from the next. */
    finishedStages: z.array(WireStageSchema).max(MAX_STAGE_CALLS).optional(),
  })
  .strict();
export type WireVignette = z.infer<typeof WireVignetteSchema>;

/**
 * A record as a worker sends it; the coordinator fills in the rest from the job it assigned. Its
 * fixed bounds (tokens, latency) are checked here; those that depend on the attempt and on settings
 * (finish time, response size) by the RemoteWorker, before anything of the frame lands.
 */
export const WireRecordSchema = z
  .object({
    vignetteIndex: z.number().int().nonnegative(),
    response: z.string(),
    usage: RecordUsageSchema.strict(),
    latencyMs: LatencySchema,
    host: z.string().min(1).max(400),
    cached: z.boolean(),
    finishedAt: z.number().int().nonnegative(),
    finishReason: z.string().max(64).optional(),
    /** A staged template's calls behind the record, in call order. */
    stages: z.array(WireStageSchema).min(1).max(MAX_STAGE_CALLS).optional(),
  })
  .strict();
export type WireRecord = z.infer<typeof WireRecordSchema>;

export const JobOptionsSchema = z
  .object({
    sampling: SamplingSchema,
    privacy: z.enum(['strict', 'fallback', 'off']),
    skipPromptCache: z.boolean(),
    shareCacheAcrossEpochs: z.boolean(),
    template: CheckedTemplateSchema.optional(),
  })
  .strict();

/** Per-job progress a worker reports with every heartbeat. */
export const JobProgressSchema = z
  .object({ job_id: JobIdSchema, attempt: AttemptSchema, vignettes_done: Count, usage: UsageSchema })
  .strict();
export type JobProgress = z.infer<typeof JobProgressSchema>;

export const WireErrorSchema = z
  .object({
    code: z.enum(ERROR_CODES),
    message: z.string().max(4000),
    retryable: z.boolean(),
    retry_after_ms: z.number().nonnegative().optional(),
  })
  .strict();
export type WireError = z.infer<typeof WireErrorSchema>;

// ---- Worker -> coordinator ----------------------------------------------------------------------

export const RegisterSchema = z
  .object({
    type: z.literal('register'),
    protocol: z.number().int(),
    worker_id: z.string().regex(/^[\w.:@-]{1,128}$/, 'letters, digits and . _ : @ - only, at most 128'),
    capacity: z.number().int().min(1).max(1024),
    models: z.union([z.literal('all'), z.array(z.string().min(1).max(200)).min(1).max(256)]),
    token: z.string().max(1024),
    version: z.string().max(64),
  })
  .strict();

export const RecordsSchema = z
  .object({ type: z.literal('records'), job_id: JobIdSchema, attempt: AttemptSchema, records: z.array(WireRecordSchema).min(1) })
  .strict();

/** A job attempt's end: its outcome, or why it failed (exactly one of the two). */
export const ResultSchema = z
  .object({
    type: z.literal('result'),
    job_id: JobIdSchema,
    attempt: AttemptSchema,
    outcome: z.object({ vignettes_done: Count, usage: UsageSchema }).strict().optional(),
    error: WireErrorSchema.optional(),
  })
  .strict()
  .refine((m) => (m.outcome === undefined) !== (m.error === undefined), 'a result carries either outcome or error');

/** A vignette the worker gave up on after its attempts, with its last error (the job goes on with the rest). */
export const GaveUpSchema = z
  .object({
    type: z.literal('gave_up'),
    job_id: JobIdSchema,
    attempt: AttemptSchema,
    vignette_index: z.number().int().nonnegative(),
    attempts: z.number().int().positive().max(1000),
    code: z.enum(ERROR_CODES),
    message: z.string().max(4000),
  })
  .strict();

/** The host a job's calls wait for because it is down (`wait`), or that none waits any more (null). */
export const WaitingSchema = z
  .object({
    type: z.literal('waiting'),
    job_id: JobIdSchema,
    attempt: AttemptSchema,
    wait: z.object({ host: z.string().min(1).max(400), since: z.number().int().nonnegative() }).strict().nullable(),
  })
  .strict();

/** One call of a staged vignette's chain answered: stored at once, so a resumed job does not pose it again. */
export const StageSchema = z
  .object({
    type: z.literal('stage'),
    job_id: JobIdSchema,
    attempt: AttemptSchema,
    vignette_index: z.number().int().nonnegative(),
    call_idx: z.number().int().nonnegative().max(MAX_STAGE_CALLS - 1),
    answer: WireStageSchema,
  })
  .strict();

/** A billed call's id, the worker's own (unique for as long as the worker process lives). */
const CallIdSchema = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
/** Tokens one call may report, and tries one call may have been billed for: generous, bounded (a worker clips to them). */
export const MAX_CALL_TOKENS = 100_000_000;
const CallTokens = z.number().int().nonnegative().max(MAX_CALL_TOKENS);
export const MAX_BILLED_TRIES = 1000;
const BilledTriesSchema = z.object({ calls: z.number().int().nonnegative().max(MAX_BILLED_TRIES), inputTokens: CallTokens, outputTokens: CallTokens }).strict();

/**
 * A call the worker is about to make to a provider that bills, for a job it holds: a sweep call
 * to the job's model, or a judge call of the job's template judge loop. The worker makes it only
 * once the coordinator answers `call_counted`.
 */
export const CallAskedSchema = z
  .object({
    type: z.literal('call_asked'),
    call_id: CallIdSchema,
    job_id: JobIdSchema,
    attempt: AttemptSchema,
    kind: z.enum(['sweep', 'judge']),
    model: z.string().min(1).max(200),
  })
  .strict();

/** How a counted call ended, as billed-calls.ts's CallEnd has it (the answer's tokens only). */
const CallEndSchema = z.discriminatedUnion('outcome', [
  z
    .object({
      outcome: z.literal('answered'),
      answer: z.object({ usage: z.object({ inputTokens: CallTokens, outputTokens: CallTokens }).strict(), cached: z.boolean() }).strict(),
      billedBefore: BilledTriesSchema.optional(),
    })
    .strict(),
  z.object({ outcome: z.literal('failed') }).strict(),
  z.object({ outcome: z.literal('billed'), tries: BilledTriesSchema }).strict(),
  z.object({ outcome: z.literal('aborted') }).strict(),
]);

/** A counted call's end: an error no provider billed is taken back out, tries billed empty added. */
export const CallEndedSchema = z.object({ type: z.literal('call_ended'), call_id: CallIdSchema, end: CallEndSchema }).strict();

export const WorkerHeartbeatSchema = z
  .object({ type: z.literal('heartbeat'), jobs: z.array(JobProgressSchema).max(1024).optional() })
  .strict();

/** Everything a registered worker may send. */
export const WorkerMessageSchema = z.discriminatedUnion('type', [
  RecordsSchema,
  ResultSchema,
  GaveUpSchema,
  WaitingSchema,
  StageSchema,
  CallAskedSchema,
  CallEndedSchema,
  WorkerHeartbeatSchema,
]);

// ---- Coordinator -> worker ----------------------------------------------------------------------

export const RegisteredSchema = z
  .object({
    type: z.literal('registered'),
    worker_id: z.string(),
    heartbeat_ms: z.number().int().positive(),
    missed_heartbeats: z.number().int().positive(),
    max_frame_bytes: z.number().int().min(PRE_REGISTER_MAX_FRAME_BYTES),
  })
  .strict();

/** The coordinator refuses a registration (bad token, protocol) and closes the connection. */
export const RefusedSchema = z
  .object({ type: z.literal('error'), code: z.enum(ERROR_CODES), message: z.string().max(4000) })
  .strict();

/**
 * A job's first frame. When its vignettes do not fit one frame, `more` is true and `assign_more`
 * frames carry the rest; the worker starts once the last one (`more: false`) arrives.
 */
export const AssignSchema = z
  .object({
    type: z.literal('assign'),
    job_id: JobIdSchema,
    attempt: AttemptSchema,
    job: z
      .object({
        runId: z.string().min(1).max(100),
        model: z.string().min(1).max(200),
        epoch: z.number().int().positive(),
        vignetteCount: z.number().int().nonnegative(),
        options: JobOptionsSchema,
        vignettes: z.array(WireVignetteSchema),
      })
      .strict(),
    more: z.boolean(),
  })
  .strict();

export const AssignMoreSchema = z
  .object({
    type: z.literal('assign_more'),
    job_id: JobIdSchema,
    attempt: AttemptSchema,
    vignettes: z.array(WireVignetteSchema).min(1),
    more: z.boolean(),
  })
  .strict();

export const CancelSchema = z.object({ type: z.literal('cancel'), job_id: JobIdSchema, attempt: AttemptSchema }).strict();

/** The call is in the run's ledger: the worker may make it. */
export const CallCountedSchema = z.object({ type: z.literal('call_counted'), call_id: CallIdSchema }).strict();

/** The call is not counted, and must not be made (a full disk, a job this worker does not hold), or a `call_ended` was not taken. */
export const CallRefusedSchema = z.object({ type: z.literal('call_refused'), call_id: CallIdSchema, error: WireErrorSchema }).strict();

export const CoordinatorHeartbeatSchema = z.object({ type: z.literal('heartbeat') }).strict();

/** Everything a coordinator may send. */
export const CoordinatorMessageSchema = z.discriminatedUnion('type', [
  RegisteredSchema,
  RefusedSchema,
  AssignSchema,
  AssignMoreSchema,
  CancelSchema,
  CallCountedSchema,
  CallRefusedSchema,
  CoordinatorHeartbeatSchema,
]);

export type RegisterMessage = z.infer<typeof RegisterSchema>;
export type RegisteredMessage = z.infer<typeof RegisteredSchema>;
export type RefusedMessage = z.infer<typeof RefusedSchema>;
export type AssignMessage = z.infer<typeof AssignSchema>;
export type AssignMoreMessage = z.infer<typeof AssignMoreSchema>;
export type CancelMessage = z.infer<typeof CancelSchema>;
export type RecordsMessage = z.infer<typeof RecordsSchema>;
export type ResultMessage = z.infer<typeof ResultSchema>;
export type GaveUpMessage = z.infer<typeof GaveUpSchema>;
export type WaitingMessage = z.infer<typeof WaitingSchema>;
export type StageMessage = z.infer<typeof StageSchema>;
export type CallAskedMessage = z.infer<typeof CallAskedSchema>;
export type CallEndedMessage = z.infer<typeof CallEndedSchema>;
export type CallCountedMessage = z.infer<typeof CallCountedSchema>;
export type CallRefusedMessage = z.infer<typeof CallRefusedSchema>;
export type WorkerMessage = z.infer<typeof WorkerMessageSchema>;
export type CoordinatorMessage = z.infer<typeof CoordinatorMessageSchema>;
/** Any frame, for the sending side (validation happens on the receiving side). */
export type Message = RegisterMessage | WorkerMessage | CoordinatorMessage;
