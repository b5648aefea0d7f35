/**
 * The contract's repository packs (`packRepository`, `cancelPack`): a folder, a `.tar.gz` or a git
 * folder's diff packed as `panoptes pack` packs it, fitted once to the smallest window of the
 * chosen models, and kept as a manifest in the data folder's `manifests/` (where every transport's
 * createRun may read it), for New run's "from a repository" source.
 *
 * A pack is bounded: its source's bytes (`maxBytes`), a time limit, and at most a few packs in
 * flight at once; and cancellable, by the id its caller gave it. The ingest layer names its inputs
 * as the CLI's flags (`--diff`, `--max-bytes`); its errors are told here by the contract's field
 * names, and one naming a path names `source`.
 * Runs on: Node (core).
 */
import { resolve } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { PanoptesError } from '../domain.js';
import { packRepository } from '../ingest/pack.js';
import { readSource, smallestWindow } from '../ingest/pack-source.js';
import { DEFAULT_MAX_BYTES } from '../ingest/repo-files.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, type Catalog } from '../models/catalog.js';
import { nearestIds } from '../models/nearest-ids.js';
import type { CancelPackResult, RepositoryPack } from './contract-pack.js';
import type { ValidInput } from './contract-dispatcher.js';
import type { ManifestUploads } from './manifest-uploads.js';

/** How long a pack may take before it is stopped (a 50 MB repository packs in well under a minute). */
export const PACK_TIME_LIMIT_MS = 5 * 60_000;
/** Packs in flight at once: each holds its source's text in memory while it is fitted. */
export const PACKS_IN_FLIGHT = 2;

/** The CLI flag an ingest error names, and the contract field it is. */
const FIELD_OF_FLAG: Record<string, string> = {
  '--models': 'models',
  '--diff': 'diff',
  '--prompt': 'instruction',
  '--split': 'split',
  '--max-bytes': 'maxBytes',
  '--answer-tokens': 'answerTokens',
};
const FLAG = /--(models|diff|prompt|split|max-bytes|answer-tokens)\b/g;

/** An ingest error as the contract names things: the field, never a CLI flag; a path is `source`. */
function asContractError(err: unknown): unknown {
  if (!(err instanceof PanoptesError) || err.code === 'cancelled' || err.code === 'timeout') return err;
  const where = err.where === undefined ? 'source' : (FIELD_OF_FLAG[err.where] ?? (err.where.startsWith('--') ? err.where.slice(2) : 'source'));
  const message = err.message.replace(FLAG, (flag) => FIELD_OF_FLAG[flag] ?? flag);
  return new PanoptesError(err.code, `${where}: ${message}`, { where, cause: err });
}

export interface RepositoryPacksOptions {
  catalog: Catalog;
  uploads: ManifestUploads;
  timeLimitMs?: number;
}

export class RepositoryPacks {
  private readonly inFlight = new Map<string, AbortController>();
  private anonymous = 0;

  constructor(private readonly opts: RepositoryPacksOptions) {}

  async pack(input: ValidInput<'packRepository'>): Promise<RepositoryPack> {
    if (this.inFlight.size >= PACKS_IN_FLIGHT) {
      throw new PanoptesError('conflict', `${PACKS_IN_FLIGHT} packs are in flight already; wait for one to end, or cancel it`, { where: 'source', retryable: true });
    }
    if (input.packId !== undefined && this.inFlight.has(input.packId)) {
      throw new PanoptesError('conflict', `packId: a pack named "${input.packId}" is in flight already`, { where: 'packId' });
    }
    const { catalog } = this.opts;
    input.models.forEach((model, i) => {
      if (!catalog.has(model)) {
        const near = nearestIds(model, catalog.modelIds()).map((id) => `"${id}"`).join(' or ');
        throw new PanoptesError('invalid_input', `models[${i}]: unknown model "${model}"; did you mean ${near}?`, { where: `models[${i}]` });
      }
    });
    const id = input.packId ?? `#${++this.anonymous}`;
    const controller = new AbortController();
    this.inFlight.set(id, controller);
    const limitMs = this.opts.timeLimitMs ?? PACK_TIME_LIMIT_MS;
    const timer = setTimeout(
      () => controller.abort(new PanoptesError('timeout', `source: the pack took longer than ${Math.round(limitMs / 1000)} s and was stopped; pack a folder inside it, a diff, or lower maxBytes`, { where: 'source' })),
      limitMs,
    );
    try {
      return await this.packNow(input, controller.signal);
    } catch (err) {
      throw asContractError(err);
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(id);
    }
  }

  async cancel({ packId }: ValidInput<'cancelPack'>): Promise<CancelPackResult> {
    const controller = this.inFlight.get(packId);
    controller?.abort(new PanoptesError('cancelled', `the pack "${packId}" was cancelled`, { where: 'packId' }));
    return { cancelled: controller !== undefined };
  }

  private async packNow(input: ValidInput<'packRepository'>, signal: AbortSignal): Promise<RepositoryPack> {
    const window = smallestWindow(this.opts.catalog, input.models);
    const answerTokens = input.answerTokens ?? Math.min(DEFAULT_MAX_OUTPUT_TOKENS, Math.floor(window / 4));
    const repo = await readSource(resolve(input.source), { diff: input.diff, maxBytes: input.maxBytes ?? DEFAULT_MAX_BYTES, signal });
    const split = input.split === undefined ? undefined : input.split === 'folder' ? ({ by: 'folder' } as const) : ({ by: 'files', count: input.split } as const);
    const vignettes = await packRepository(repo, { instruction: input.instruction, models: input.models, window, answerTokens, split, signal });
    // Kept line by line: a split pack's lines together can be as large as the repository.
    const lines: string[] = [];
    for (const v of vignettes) {
      lines.push(JSON.stringify(v) + '\n');
      await turn();
    }
    const manifestPath = await this.opts.uploads.keep(lines, `${repo.name}${repo.diff ? '-diff' : ''}-pack.jsonl`);
    return {
      manifestPath,
      repository: repo.name,
      source: repo.kind,
      window,
      answerTokens,
      vignettes: vignettes.map((v) => ({ id: v.id, coverage: v.metadata.coverage, dropped: v.metadata.dropped.length, promptTokens: v.metadata.fit.promptTokens })),
      leftOut: vignettes[0]!.metadata.leftOut,
    };
  }
}
