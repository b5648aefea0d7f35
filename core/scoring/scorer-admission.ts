/**
 * Scorer admission: the one place a scorer definition is let in. A scoring file (from the CLI, the
 * HTTP API or the app, shaped by the contract's schema) has its baseline files pinned, each
 * definition built once by the registry, checked against the run it scores (a pairwise baseline is
 * one of its models, then the caller's own refusals), and the layers' checks run (a plugin loaded in
 * its sandbox); what is attached is what was built here. The scorekeeper admits a stored version
 * the same way on resume: parsed with the same schema, built by the same registry with the same
 * errors, once per version; a template's judge loop has its stage's definitions parsed and built
 * here too, once per set of versions. Errors name the definition and its field (`scorers.2.pattern: ...`).
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';
import { formatZodIssues } from '../validation.js';
import { pinBaselineFiles } from './judge/baseline-file.js';
import { refuseBaselinesOutsideRun } from './judge/baseline-model.js';
import type { BuiltScorer, CallBilling, ScorerRegistry } from './scorer-registry.js';
import { ScorerDefinitionSchema, ScoringConfigSchema, type ScoringConfig } from './scoring-config.js';
import { scorerVersion } from './scorer-version.js';

/** A scoring file let in: its definitions (baseline files pinned) and the scorers built from them, in order. */
export interface AdmittedScorers {
  readonly config: ScoringConfig;
  readonly built: readonly BuiltScorer[];
}

/** The run a scoring file is admitted for. */
export interface AdmissionTarget {
  /** The run's models: a pairwise judge's baseline must be one. */
  readonly models: readonly string[];
  /** The run as errors name it ("the run", "run 01J..."). */
  readonly whose: string;
  /** Refusals only the caller can make, before the layers' checks (a judge the run's privacy could never call). */
  readonly refuse?: (admitted: AdmittedScorers) => void | Promise<void>;
}

/** A stored scorer version as the scorekeeper has it: built, or why this process cannot build it. */
export type StoredAdmission = { built: BuiltScorer; error?: undefined } | { built?: undefined; error: Error };

/**
 * A scoring file's raw value (a file's parsed text, a template's judge loop) as a scoring config:
 * refused naming the field, `where` first (a file's path) when given.
 */
export function parseScoringConfig(value: unknown, where?: string): ScoringConfig {
  const parsed = ScoringConfigSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0]?.path.map(String).join('.');
  const field = where === undefined ? first : first ? `${where}: ${first}` : where;
  throw new PanoptesError('invalid_input', `${where === undefined ? '' : `${where}: `}${formatZodIssues(parsed.error)}`, field ? { where: field } : {});
}

export class ScorerAdmission {
  private readonly stored = new Map<string, StoredAdmission>();
  private readonly staged = new Map<string, readonly BuiltScorer[]>();

  /** `stageBilling` wraps the clients of a template's judge loop (its calls billed to the run: in this store, or on a remote worker in the coordinator's ledger). */
  constructor(
    private readonly registry: ScorerRegistry,
    private readonly stageBilling?: CallBilling,
  ) {}

  /**
   * Lets a scoring file in for a run (with a target) or for a template's judge loop (without):
   * every definition built and checked, or the first that fails, named, and nothing kept.
   */
  async admit(config: ScoringConfig, target?: AdmissionTarget): Promise<AdmittedScorers> {
    const pinned = target === undefined ? config : await pinBaselineFiles(config);
    const admitted: AdmittedScorers = { config: pinned, built: this.registry.buildAll(pinned) };
    if (target !== undefined) {
      refuseBaselinesOutsideRun(pinned, target.models, target.whose);
      await target.refuse?.(admitted);
    }
    await this.registry.check(pinned);
    return admitted;
  }

  /**
   * A stored scorer version for the scorekeeper, parsed and built once per version: its judges'
   * calls go through `bill`. A definition this process cannot build (url_health without
   * --allow-network) is kept as its error, named as at admission, so it is not tried again.
   */
  storedScorer(rs: { version: string; name: string; definition: unknown }, bill: CallBilling): StoredAdmission {
    const known = this.stored.get(rs.version);
    if (known) return known;
    const where = `scorer ${rs.name}`;
    let admitted: StoredAdmission;
    try {
      const parsed = ScorerDefinitionSchema.safeParse(rs.definition);
      if (!parsed.success) throw new PanoptesError('invalid_input', formatZodIssues(parsed.error, where), { where });
      admitted = { built: this.registry.build(parsed.data, where, bill) };
    } catch (err) {
      admitted = { error: err as Error };
    }
    this.stored.set(rs.version, admitted);
    return admitted;
  }

  /**
   * A template's judge loop as a worker runs it: the stage's definitions parsed with the scoring
   * file's schema (refused naming the field) and built once per set of versions, their judges'
   * calls through `stageBilling`.
   */
  stageScorers(definitions: readonly unknown[]): readonly BuiltScorer[] {
    const config = parseScoringConfig({ scorers: definitions });
    const key = config.scorers.map(scorerVersion).join(' ');
    let built = this.staged.get(key);
    if (!built) {
      built = this.registry.buildAll(config, this.stageBilling);
      this.staged.set(key, built);
    }
    return built;
  }

  /** Closes every scorer built for a stored version or a judge loop (a plugin's thread) and forgets them. */
  async close(): Promise<void> {
    const built = [...[...this.stored.values()].flatMap((s) => (s.built ? [s.built] : [])), ...[...this.staged.values()].flat()];
    this.stored.clear();
    this.staged.clear();
    await Promise.all(built.map((b) => b.scorer.close?.()));
  }
}
