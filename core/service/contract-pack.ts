/**
 * The contract's repository packs: a folder, a `.tar.gz` or a git folder's diff packed (as
 * `panoptes pack` packs it) into a manifest kept in the data folder, for New run's "from a
 * repository" source; and the Cancel of a pack in flight. Re-exported by contract.ts, the one API.
 * Runs on: Node (core); types shared with the renderer.
 */
import { z } from 'zod';
import type { PackCoverage } from '../ingest/pack.js';

/** The most bytes of files a pack over the contract may hold (`maxBytes`' ceiling; 50 MB by default). */
export const PACK_MAX_BYTES_CEILING = 200 * 1024 * 1024;

export const PackRepositoryInputSchema = z
  .object({
    /** A folder, a `.tar.gz`, or (with `diff`) a git folder, on the engine's disk. */
    source: z.string().trim().min(1, 'name a folder, a .tar.gz file, or a git folder').max(4096),
    /** The models the pack is for: it is fitted once to the smallest context window among them. */
    models: z
      .array(z.string().min(1).max(200))
      .min(1, 'choose at least one model')
      .max(64)
      .refine((m) => new Set(m).size === m.length, 'each model at most once'),
    /** `BASE..HEAD`: only the files changed between two refs of the git folder, with the unified diff. */
    diff: z
      .string()
      .trim()
      .max(500)
      .regex(/^[^.\s-][^\s]*?\.\.[^.\s-][^\s]*$/, 'two refs as BASE..HEAD (neither starting with - or .)')
      .optional(),
    /** The instruction put before the files (text; the CLI's --prompt may name a file instead). */
    instruction: z.string().max(100_000).optional(),
    /** When one vignette does not fit: one per top-level folder, or one per N files. */
    split: z.union([z.literal('folder'), z.number().int().min(1).max(100_000)]).optional(),
    /** Refuse a source holding more bytes of files to pack (default 50 MB). */
    maxBytes: z.number().int().min(1).max(PACK_MAX_BYTES_CEILING).optional(),
    /** Tokens kept free for the answer (default 4096, at most a quarter of the window). */
    answerTokens: z.number().int().min(1).max(10_000_000).optional(),
    /** A name the caller picks for this pack, so `cancelPack` can stop it. */
    packId: z.string().regex(/^[\w-]{1,64}$/, 'letters, digits, _ and -, at most 64').optional(),
  })
  .strict();
export type PackRepositoryInput = z.input<typeof PackRepositoryInputSchema>;

export const CancelPackInputSchema = z.object({ packId: z.string().regex(/^[\w-]{1,64}$/, 'letters, digits, _ and -, at most 64') }).strict();
export type CancelPackInput = z.infer<typeof CancelPackInputSchema>;

export interface PackedVignetteSummary {
  id: string;
  coverage: PackCoverage;
  /** Files dropped to fit the window. */
  dropped: number;
  promptTokens: number;
}

export interface RepositoryPack {
  /** The manifest written, in the data folder's `manifests/`: what createRun's manifestPath names. */
  manifestPath: string;
  repository: string;
  source: 'folder' | 'tarball' | 'diff';
  /** The smallest context window among the models, and the tokens kept free in it for the answer. */
  window: number;
  answerTokens: number;
  vignettes: PackedVignetteSummary[];
  /** Files left out before fitting, per reason (binary, lockfile, dependency, vcs, vendored, symlink, special). */
  leftOut: Record<string, number>;
}

export interface CancelPackResult {
  /** Whether a pack of that id was in flight (it then ends with a `cancelled` error). */
  cancelled: boolean;
}
