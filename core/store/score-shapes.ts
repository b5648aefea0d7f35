/**
 * The shapes scoring's room reads and writes: scorer versions, the scorers attached to a run, the
 * records a scorer is given, new scores, report cells, matrix scores and a record's scores. Kept
 * apart from `score-store.ts`, whose methods speak them, so that room stays one concern.
 * Runs on: Node (core).
 */
import type { ChatTurn, RunId, ScorerKind, ScorerLayer, Severity } from '../domain.js';

export const SEVERITY_CODE: Record<Severity, number> = { none: 0, soft: 1, hard: 2 };
export const SEVERITY_NAME: readonly Severity[] = ['none', 'soft', 'hard'];

export interface NewScorerVersion {
  version: string;
  name: string;
  kind: ScorerKind;
  layer: ScorerLayer;
  judges: readonly string[];
  definition: unknown;
}

/** A scorer attached to a run, with its progress. */
export interface RunScorer {
  runId: RunId;
  scorerId: number;
  version: string;
  name: string;
  kind: ScorerKind;
  layer: ScorerLayer;
  judges: string[];
  definition: unknown;
  position: number;
  scoredSeq: number;
  done: number;
  failed: number;
  owner: string | null;
  leaseUntil: number | null;
  /** Why the scorer version was stopped for good (a plugin whose thread kept crashing), or null. */
  stopped: string | null;
  /** Why the last record it could not score was not (null when every record scored). */
  lastError: string | null;
  /**
   * Whether every verdict it gave on the run (the records' and their retries') is a boolean pass
   * (value 1) or fail (value 0); null before the first verdict. Kept as verdicts are written.
   */
  verdictsBoolean: boolean | null;
}

/** What a scorer needs of one record, without the vignette (read once per vignette, not per record). */
export interface RecordToScore {
  seq: number;
  response: string;
  vignetteIdx: number;
  model: string;
  epoch: number;
  vignette: StoredVignetteForScoring;
}

/** A vignette as scorers see it; `metadata` may be shared by the records of a page: read it, never change it. */
export interface StoredVignetteForScoring {
  id: string;
  prompt: string;
  system?: string;
  messages?: ChatTurn[];
  target?: string;
  metadata?: Record<string, unknown>;
}

/** One score to write. */
export interface NewScore {
  seq: number;
  judge: number;
  value: number;
  passed: boolean | null;
  severity: Severity;
  /** Stored only when not empty. */
  explanation: string;
  failed: boolean;
  /**
   * The judge answered but gave no verdict (unreadable): stored with failed = 2, so the record is
   * scored (not retried) while reports read this judge's verdict as missing, never as a fail.
   */
  noVerdict?: boolean;
}

/** A verdict that is a boolean: passed with value 1, or failed with value 0 (how the report tells a pass/fail plugin). */
export function isBooleanVerdict(v: { value: number; passed: boolean | null }): boolean {
  return v.passed !== null && v.value === (v.passed ? 1 : 0);
}

/** One score as reports read it. */
export interface StoredScoreCell {
  seq: number;
  model: string;
  epoch: number;
  vignetteIdx: number;
  vignetteId: string;
  judge: number;
  value: number;
  passed: boolean | null;
  /** The vignette's value of the metadata key asked for, as text; null without one. */
  group: string | null;
  /** No verdict: the record could not be scored, or this judge gave none. Reports count it as missing. */
  missing: boolean;
}

/** One score as exports and details read it. */
export interface ScoreLine extends Omit<StoredScoreCell, 'group' | 'missing'> {
  /** 1 for the sweep's record; 2 and on for a retry on a hard fail. */
  attempt: number;
  scorerName: string;
  version: string;
  judges: string[];
  severity: Severity;
  explanation: string;
}

/** One verdict as the vignette x model matrix reads it: where it belongs, and its value. */
export interface MatrixScore {
  model: string;
  epoch: number;
  vignetteIdx: number;
  judge: number;
  value: number;
  passed: boolean | null;
}

/** A vignette's id and metadata, without its prompt: what a row of the matrix is headed by. */
export interface VignetteHead {
  idx: number;
  id: string;
  metadata?: Record<string, unknown>;
}

/** One score of one record, for every scorer version attached to its run (in the order attached). */
export interface RecordScore {
  scorerName: string;
  version: string;
  /** The judge's logical model (LLM judges); null for rules and plugins. */
  judge: string | null;
  value: number;
  passed: boolean | null;
  severity: Severity;
  explanation: string;
}

/** Export order: record, scorer (in the order attached), attempt, judge. */
