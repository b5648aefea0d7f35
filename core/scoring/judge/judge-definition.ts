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
    /** Pairwise mode: the model whose answer each answer is compared with. */
    baseline: ModelId.optional(),
    /** Default temperature 0, a fixed seed and 512 output tokens; a field given here wins. */
    sampling: SamplingSchema.optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    if (d.mode === 'pairwise' && d.baseline === undefined) {
      ctx.addIssue({ code: 'custom', path: ['baseline'], message: 'pairwise mode needs a baseline model to compare with' });
    }
    if (d.mode !== 'pairwise' && d.baseline !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['baseline'], message: 'a baseline is only for mode "pairwise"' });
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
  baseline: string | null;
  sampling: Sampling;
  severity: 'hard' | 'soft';
}

export function resolveJudgeDefinition(d: JudgeDefinition): ResolvedJudgeDefinition {
  return {
    name: d.name,
    judges: [...d.judges],
    rubric: d.rubric,
    scale: d.scale ?? 'pass_fail',
    mode: d.mode ?? 'single',
    baseline: d.baseline ?? null,
    sampling: { ...JUDGE_DEFAULT_SAMPLING, ...d.sampling },
    severity: d.severity ?? 'hard',
  };
}
