/**
 * The scorer registry: turns a validated definition from a scoring file into a `Scorer` at its
 * version. Rules are built here; the other layers register a builder for their type, so the
 * scoring work queue never learns which layer a scorer belongs to.
 * Runs on: Node (core).
 */
import { PanoptesError, type ScorerLayer } from '../domain.js';
import type { ModelClient } from '../models/model-client.js';
import { ruleCheck, ruleValue } from './rule-scorers.js';
import type { Scorer, ScoreInput, ScoreValue, FailSeverity } from './scorer.js';
import type { ScorerDefinition, ScoringConfig } from './scoring-config.js';
import { scorerVersion } from './scorer-version.js';

/** A built scorer and what the store keeps about it. */
export interface BuiltScorer {
  scorer: Scorer;
  layer: ScorerLayer;
  definition: ScorerDefinition;
}

/**
 * Wraps the client a scorer that calls models (a judge) calls through: the scorekeeper's bills
 * each call to the scorer version before it is made (billed-client.ts).
 */
export type CallBilling = (client: ModelClient) => ModelClient;

/** Builds a scorer of one type from its definition; `where` names it in errors (`scorers.2`). */
export type ScorerBuilder = (definition: ScorerDefinition, version: string, where: string, bill?: CallBilling) => BuiltScorer;

/** What building cannot show of a definition, checked before a scoring file is accepted; rejects naming the field. */
export type ScorerCheck = (definition: ScorerDefinition, where: string) => Promise<void>;

/** A rule as a scorer: pass/fail, one verdict a record. The `json_parses` built-in is one too. */
export class RuleScorer implements Scorer {
  readonly kind = 'pass_fail';
  readonly judges: readonly string[] = [];
  constructor(
    readonly name: string,
    readonly version: string,
    private readonly check: (input: ScoreInput) => string | null,
    private readonly severity: FailSeverity,
  ) {}

  // Async so a record the rule refuses (an empty target) rejects, as the seam says, rather than throws.
  async score(input: ScoreInput): Promise<ScoreValue[]> {
    return [ruleValue(this.check(input), this.severity)];
  }
}

export class ScorerRegistry {
  private readonly builders = new Map<string, ScorerBuilder>();
  private readonly checks = new Map<string, ScorerCheck>();

  /**
   * Adds the builder of a layer's type (`code`, `judge`), and the check its definitions need
   * beyond what building them shows (loading a plugin in its sandbox).
   */
  register(type: string, builder: ScorerBuilder, check?: ScorerCheck): void {
    this.builders.set(type, builder);
    if (check) this.checks.set(type, check);
  }

  /** Runs the layers' checks over a scoring file: the first definition (in file order) that fails them, named. */
  async check(config: ScoringConfig): Promise<void> {
    const outcomes = await Promise.allSettled(config.scorers.map((d, i) => this.checks.get(d.type)?.(d, `scorers.${i}`)));
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
  }

  build(definition: ScorerDefinition, where: string, bill?: CallBilling): BuiltScorer {
    const version = scorerVersion(definition);
    const builder = this.builders.get(definition.type);
    if (builder) return builder(definition, version, where, bill);
    const check = ruleCheck(definition, where);
    return { scorer: new RuleScorer(definition.name, version, check, definition.severity ?? 'hard'), layer: 'rule', definition };
  }

  /** Every scorer of a scoring file, or the first definition that cannot be built, named; `bill` wraps their judges' clients. */
  buildAll(config: ScoringConfig, bill?: CallBilling): BuiltScorer[] {
    return config.scorers.map((d, i) => {
      try {
        return this.build(d, `scorers.${i}`, bill);
      } catch (err) {
        if (err instanceof PanoptesError) throw err;
        throw new PanoptesError('invalid_input', `scorers.${i}: ${(err as Error).message}`, { where: `scorers.${i}` });
      }
    });
  }
}
