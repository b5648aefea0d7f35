/**
 * The contract's scoring part: the inputs of the scoring methods (scoreRun, report, compareRuns,
 * scoreMatrix, scoreDetail) as zod schemas, and the scoring status and side-by-side detail they
 * answer with. Re-exported by the contract (contract.ts), which every importer keeps using.
 * Runs on: Node (core); types shared with the renderer.
 */
import { z } from 'zod';
import type { ScorerKind, ScorerLayer, Vignette } from '../domain.js';
import type { Severity } from '../scoring/scorer.js';
import { ScoringConfigSchema } from '../scoring/scoring-config.js';
import type { ModelCost } from './contract-costs.js';

// ---- Inputs ----------------------------------------------------------------------------------

export const ScoreRunInputSchema = z.object({ runId: z.string().min(1).max(100), scorers: ScoringConfigSchema }).strict();
export type ScoreRunInput = z.infer<typeof ScoreRunInputSchema>;

const ScorerNameInput = z.string().min(1).max(100);
const ReducerInput = z.enum(['mean', 'majority', 'max']);

export const ReportInputSchema = z
  .object({
    runId: z.string().min(1).max(100),
    /** The scorer to report (default: the first attached); its newest version. */
    scorer: ScorerNameInput.optional(),
    /** A metadata key: standard errors clustered by it, and a leaderboard per value. */
    by: z.string().min(1).max(200).optional(),
    reducer: ReducerInput.optional(),
    /**
     * Which attempt of each record the statistics use when a scorer retried hard fails: `first`
     * (default) the sweep's own record, `final` each record's last attempt.
     */
    attempt: z.enum(['first', 'final']).optional(),
  })
  .strict();
export type ReportInput = z.infer<typeof ReportInputSchema>;

/** The report as one self-contained HTML page: the report's own fields, and how many vignettes its table lists. */
export const ReportHtmlInputSchema = ReportInputSchema.extend({
  /** Vignettes the page's table lists, the first N in manifest order (default 2,000). */
  vignettes: z.number().int().min(0).max(1_000_000).optional(),
  /**
   * Where to write the page (the desktop app: from its save dialog); absent, the page is the
   * answer. A remote transport refuses it: a browser or a client saves what it is sent.
   */
  outPath: z.string().min(1).optional(),
}).strict();
export type ReportHtmlInput = z.infer<typeof ReportHtmlInputSchema>;

/** A report page: its text (unless written to `path`), the file name it suggests, and the vignettes its table lists of the run's. */
export interface HtmlReportResult {
  /** The scorer the page reports (the one asked for, else the run's first). */
  scorer: string;
  fileName: string;
  html?: string;
  path?: string;
  rows: number;
  total: number;
}

export const CompareRunsInputSchema = z
  .object({
    runA: z.string().min(1).max(100),
    runB: z.string().min(1).max(100),
    scorer: ScorerNameInput.optional(),
    reducer: ReducerInput.optional(),
  })
  .strict();
export type CompareRunsInput = z.infer<typeof CompareRunsInputSchema>;

export const ScoreMatrixInputSchema = z
  .object({
    runId: z.string().min(1).max(100),
    /** The scorer (default: the first attached); its newest version. */
    scorer: ScorerNameInput.optional(),
    reducer: ReducerInput.optional(),
    /** Manifest order (default), largest flip rate first, or largest judge disagreement first. */
    sort: z.enum(['vignette', 'flip_rate', 'judge_disagreement']).optional(),
    /** Only the vignettes whose id, prompt or metadata holds this text (any case); `total` counts them. */
    search: z.string().max(200).optional(),
    /** Rows per page (default 50). */
    limit: z.number().int().min(1).max(1000).optional(),
    /** Where the page starts in the order (a page's `nextCursor`). */
    cursor: z.number().int().min(0).optional(),
  })
  .strict();
export type ScoreMatrixInput = z.infer<typeof ScoreMatrixInputSchema>;

export const ScoreDetailInputSchema = z
  .object({
    runId: z.string().min(1).max(100),
    vignetteId: z.string().min(1).max(1000),
  })
  .strict();
export type ScoreDetailInput = z.infer<typeof ScoreDetailInputSchema>;

// ---- Outputs ---------------------------------------------------------------------------------

/** One scorer version attached to a run, and how far it got. */
export interface ScorerStatus {
  name: string;
  version: string;
  /** The kind its figures are read as: a code plugin declared graded whose every verdict is a boolean is pass/fail. */
  kind: ScorerKind;
  layer: ScorerLayer;
  judges: string[];
  /** Records scored. */
  done: number;
  /** Records landed and not scored yet. */
  pending: number;
  /** Records the scorer could not score (a judge call kept failing); scoring again retries them. */
  failed: number;
  /** Why the scorer version was stopped for good (a plugin whose thread kept crashing): its pending records are never scored. */
  stopped: string | null;
  /** Why the last of them could not be scored; null when none failed. */
  lastError: string | null;
}

export interface ScoringStatus {
  runId: string;
  scorers: ScorerStatus[];
  /** Judge calls' tokens and cost, apart from the sweep's own. */
  judgeUsage: ModelCost[];
  /** The candidate models' calls that retried hard fails (retryOnHardFail), apart from the sweep's and the judges'. */
  retryUsage: ModelCost[];
}

/** One vignette of a run: every model's response at every epoch, each with every score it got. */
export interface ScoreDetail {
  runId: string;
  vignette: Vignette;
  /** By model (the run's order), then epoch. */
  responses: {
    model: string;
    epoch: number;
    seq: number;
    response: string;
    /** One per (scorer version, judge) attached to the run, in the order the scorers were attached; empty until scored. */
    scores: {
      scorer: string;
      version: string;
      value: number;
      passed: boolean | null;
      severity: Severity;
      /** A failed check's reason, or the judge's rationale; empty when a rule passed. */
      explanation: string;
      /** The judge's model for an LLM judge; null for rules. */
      judge: string | null;
    }[];
    /**
     * The retries of this answer that a scorer with retryOnHardFail made after a hard fail (attempt
     * 2 and on, this answer being attempt 1), each with that scorer's verdicts on it (none when it
     * could not be scored); empty without retries.
     */
    retries: {
      scorer: string;
      version: string;
      attempt: number;
      response: string;
      scores: ScoreDetail['responses'][number]['scores'];
    }[];
    /** A staged template's calls behind the answer, in order, each with the prompt it was posed with; absent without a template. */
    stages?: DetailStage[];
  }[];
}

/** One call of a staged record in the side-by-side view. */
export interface DetailStage {
  stage: string;
  /** The fan-out item's index, or null. */
  item: number | null;
  round: number;
  /** Rebuilt from the template; null when the template no longer has the stage. */
  prompt: string | null;
  response: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
}
