/**
 * The scoring file: which scorers a run is scored with. One zod schema per scorer type, so a typo
 * or an absurd value is refused with the field it is in (`scorers.2.pattern: ...`) before anything
 * is stored. The CLI reads the file as JSON or YAML and sends the parsed object; HTTP and the app
 * send the object itself.
 * Runs on: Node (core).
 */
import { z } from 'zod';
import { commonDefinitionFields as common } from './definition-fields.js';
import { JudgeDefinitionSchema } from './judge/judge-definition.js';
import { linearRegexProblem, schemaSizeProblem } from './linear-regex.js';
import { CodeDefinitionSchema } from './plugin/code-definition.js';

const Phrases = z.array(z.string().min(1).max(10_000)).min(1).max(1000);

export const MatchDefinitionSchema = z
  .object({
    ...common,
    type: z.literal('match'),
    /** The whole answer must be the target (after trim, case folding and NFKC); default: the answer ends with it, punctuation aside. */
    exact: z.boolean().optional(),
    /** A target that is a number is compared as a number (`1,000`, `$1,000`, `1e3`, `42.0`). */
    numeric: z.boolean().optional(),
  })
  .strict();

export const IncludesDefinitionSchema = z
  .object({
    ...common,
    type: z.literal('includes'),
    /** Phrases to look for; default: the vignette's target. */
    values: Phrases.optional(),
    /** Every phrase must appear (default: any one). */
    all: z.boolean().optional(),
    caseSensitive: z.boolean().optional(),
  })
  .strict();

export const RegexDefinitionSchema = z
  .object({
    ...common,
    type: z.literal('regex'),
    pattern: z
      .string()
      .min(1)
      .max(10_000)
      .superRefine((p, ctx) => {
        const problem = linearRegexProblem(p);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
    flags: z
      .string()
      .regex(/^[imsu]*$/, 'only the flags i, m, s, u')
      .optional(),
  })
  .strict();

export const ChoiceDefinitionSchema = z
  .object({
    ...common,
    type: z.literal('choice'),
    /** The options a response may choose from (default A-E); the last one it states is its choice. */
    choices: z.array(z.string().min(1).max(20)).min(2).max(26).optional(),
  })
  .strict();

export const WordsDefinitionSchema = z
  .object({
    ...common,
    type: z.literal('words'),
    min: z.number().int().min(0).max(10_000_000).optional(),
    max: z.number().int().min(0).max(10_000_000).optional(),
  })
  .strict()
  .refine((d) => d.min !== undefined || d.max !== undefined, { message: 'give min, max or both', path: ['min'] })
  .refine((d) => d.min === undefined || d.max === undefined || d.min <= d.max, { message: 'min is above max', path: ['max'] });

export const SectionsDefinitionSchema = z
  .object({ ...common, type: z.literal('sections'), headings: z.array(z.string().min(1).max(200)).min(1).max(100) })
  .strict();

export const BannedDefinitionSchema = z
  .object({ ...common, type: z.literal('banned'), phrases: Phrases, caseSensitive: z.boolean().optional() })
  .strict();

export const JsonDefinitionSchema = z
  .object({
    ...common,
    type: z.literal('json'),
    /** A JSON Schema the parsed response must satisfy. */
    schema: z
      .record(z.string(), z.unknown())
      .superRefine((schema, ctx) => {
        // Before anything walks it: a schema 3,000 levels deep would overflow the stack of what does.
        const problem = schemaSizeProblem(schema);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
  })
  .strict();

export const ScorerDefinitionSchema = z.discriminatedUnion('type', [
  MatchDefinitionSchema,
  IncludesDefinitionSchema,
  RegexDefinitionSchema,
  ChoiceDefinitionSchema,
  WordsDefinitionSchema,
  SectionsDefinitionSchema,
  BannedDefinitionSchema,
  JsonDefinitionSchema,
  CodeDefinitionSchema,
  JudgeDefinitionSchema,
]);
export type ScorerDefinition = z.infer<typeof ScorerDefinitionSchema>;
export type ScorerType = ScorerDefinition['type'];

export const ScoringConfigSchema = z
  .object({ scorers: z.array(ScorerDefinitionSchema).min(1).max(64) })
  .strict()
  .superRefine((config, ctx) => {
    const seen = new Map<string, number>();
    config.scorers.forEach((s, i) => {
      const first = seen.get(s.name);
      if (first !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['scorers', i, 'name'], message: `"${s.name}" is also scorers.${first}'s name` });
      } else seen.set(s.name, i);
    });
  });
export type ScoringConfig = z.infer<typeof ScoringConfigSchema>;
