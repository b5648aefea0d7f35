/**
 * A `type: "judge"` scorer definition, as a scoring file gives it: a rubric and a scale posed to
 * one or more judge models, in single mode (grade each answer) or pairwise mode (compare each
 * answer with a baseline model's answer to the same vignette and epoch, in both orders). The
 * scoring file's schema takes this one; `resolveJudgeDefinition` fills what a file may leave out.
 * Runs on: Node (core).
 */
import { z } from 'zod';
import type { JudgeScale } from '../../models/judge-protocol.js';
import { SamplingSchema } from '../../models/sampling.js';
import type { Sampling } from '../../domain.js';
import { commonDefinitionFields } from '../definition-fields.js';
import type { FailSeverity } from '../scorer.js';

/** Judges answer at temperature 0 with this seed unless the definition says otherwise: the same prompt, the same verdict. */
export const JUDGE_DEFAULT_SAMPLING = { temperature: 0, seed: 20_240_601, maxTokens: 512 } as const;

const ModelId = z.string().trim().min(1).max(200);

export const JudgeScaleSchema = z.union([
  z.literal('pass_fail'),
  z
    .object({ min: z.number().finite(), max: z.number().finite() })
    .strict()
    .refine((s) => s.max > s.min, { message: 'scale.max must be greater than scale.min' }),
]);

export const JudgeDefinitionSchema = z
  .object({
    ...commonDefinitionFields,
    type: z.literal('judge'),
    /** The judge models (catalog ids), each consulted on every answer. */
    judges: z
      .array(ModelId)
      .min(1)
      .max(8)
      .refine((js) => new Set(js).size === js.length, { message: 'judges must not repeat a model' }),
    /** What the judge is asked to assess, in plain words. */
    rubric: z.string().trim().min(1).max(20_000),
    /** Default pass_fail. */
    scale: JudgeScaleSchema.optional(),
    /** Default single. */
    mode: z.enum(['single', 'pairwise']).optional(),
    /** Pairwise mode: the run's model whose answer to the same vignette and epoch each answer is compared with. */
    baseline: ModelId.optional(),
    /**
     * Pairwise mode, instead of `baseline`: a JSONL file of answers (`{"id", "response"}` lines, or
     * the lines of a run's responses.jsonl) each answer is compared with. A scoring file gives it
     * relative to itself; the engine resolves it and pins its content in `baselineSha256`.
     */
    baselineFile: z.string().trim().min(1).max(4096).optional(),
    /** The sha256 of the baseline file's bytes: part of the definition, so a changed file makes a new scorer version. */
    baselineSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'a sha256 in lower-case hex')
      .optional(),
    /** Default temperature 0, a fixed seed and 512 output tokens; a field given here wins. */
    sampling: SamplingSchema.optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    if (d.mode === 'pairwise' && d.baseline === undefined && d.baselineFile === undefined) {
      ctx.addIssue({ code: 'custom', path: ['baseline'], message: 'pairwise mode needs a baseline model (or a baselineFile) to compare with' });
    }
    if (d.baseline !== undefined && d.baselineFile !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['baselineFile'], message: 'give baseline or baselineFile, not both' });
    }
    for (const field of ['baseline', 'baselineFile'] as const) {
      if (d.mode !== 'pairwise' && d[field] !== undefined) {
        ctx.addIssue({ code: 'custom', path: [field], message: `a ${field} is only for mode "pairwise"` });
      }
    }
    if (d.baselineSha256 !== undefined && d.baselineFile === undefined) {
      ctx.addIssue({ code: 'custom', path: ['baselineSha256'], message: 'baselineSha256 pins a baselineFile: give the file too' });
    }
    if (d.mode === 'pairwise' && d.scale !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['scale'], message: 'pairwise mode has its own scale (win, tie, loss): leave scale out' });
    }
  });
export type JudgeDefinition = z.infer<typeof JudgeDefinitionSchema>;

/** A definition with everything filled in: what the judge scorer runs on. */
export interface ResolvedJudgeDefinition {
  name: string;
  judges: string[];
  rubric: string;
  scale: JudgeScale;
  mode: 'single' | 'pairwise';
  /** The run's model compared with (pairwise); null for single mode or a baseline file. */
  baseline: string | null;
  /** The baseline file's path and pinned hash (pairwise from a file); null otherwise. */
  baselineFile: { path: string; sha256: string | null } | null;
  sampling: Sampling;
  severity: FailSeverity;
}

export function resolveJudgeDefinition(d: JudgeDefinition): ResolvedJudgeDefinition {
  return {
    name: d.name,
    judges: [...d.judges],
    rubric: d.rubric,
    scale: d.scale ?? 'pass_fail',
    mode: d.mode ?? 'single',
    baseline: d.baseline ?? null,
    baselineFile: d.baselineFile === undefined ? null : { path: d.baselineFile, sha256: d.baselineSha256 ?? null },
    sampling: { ...JUDGE_DEFAULT_SAMPLING, ...d.sampling },
    severity: d.severity ?? 'hard',
  };
}

/**
 * What a stored definition's pairwise judge compares answers with, as a report names it: the
 * baseline model, or the baseline file; undefined for anything but a pairwise judge.
 */
export function pairwiseBaselineOf(definition: unknown): string | undefined {
  const d = JudgeDefinitionSchema.safeParse(definition);
  if (!d.success || d.data.mode !== 'pairwise') return undefined;
  return d.data.baseline ?? `file ${d.data.baselineFile}`;
}
