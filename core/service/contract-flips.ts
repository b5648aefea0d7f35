/**
 * The contract's flipped vignettes: between two runs of one manifest, for one pass/fail scorer,
 * the vignettes whose verdict changed, model by model (pass in A and fail in B, and back).
 * Re-exported by the contract (contract.ts).
 * Runs on: Node (core); types shared with the renderer.
 */
import { z } from 'zod';

export const FlippedVignettesInputSchema = z
  .object({
    runA: z.string().min(1).max(100),
    runB: z.string().min(1).max(100),
    /** A pass/fail scorer both runs have (default: run A's first). */
    scorer: z.string().min(1).max(200).optional(),
    /** Vignette ids listed per model and direction (default 200); the counts cover all. */
    limit: z.number().int().min(1).max(10_000).optional(),
  })
  .strict();
export type FlippedVignettesInput = z.infer<typeof FlippedVignettesInputSchema>;

/** One model's changed verdicts. A vignette's verdict is its epochs' majority (more than half passed). */
export interface ModelFlips {
  model: string;
  /** Vignettes both runs gave this model a verdict on. */
  compared: number;
  passToFailCount: number;
  failToPassCount: number;
  /** The first `limit` of each, in manifest order of run B. */
  passToFail: string[];
  failToPass: string[];
}

export interface FlippedVignettes {
  runA: string;
  runB: string;
  scorer: string;
  /** One per model both runs have. */
  models: ModelFlips[];
}
