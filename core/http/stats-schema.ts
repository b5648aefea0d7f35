/**
 * The schema of the `/stats` shape: checked on the way out of `GET /stats`, so nothing but its
 * fields can leave. Apart from the mapping (stats-shapes.ts) so that the CLI, which only maps,
 * loads no validator.
 * Runs on: Node (core).
 */
import { z } from 'zod';

export const ModelStatsSchema = z
  .object({
    model: z.string(),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    calls: z.number().int(),
    est_cost_usd: z.number(),
  })
  .strict();

export const StatsShapeSchema = z
  .object({
    models: z.array(ModelStatsSchema),
    total_est_cost_usd: z.number(),
  })
  .strict();
export type StatsShape = z.infer<typeof StatsShapeSchema>;
export type ModelStats = z.infer<typeof ModelStatsSchema>;

/** The JSON schema Fastify serialises `GET /stats` with (drops anything not in the /stats shape). */
export const STATS_JSON_SCHEMA = z.toJSONSchema(StatsShapeSchema, { target: 'draft-7' });
