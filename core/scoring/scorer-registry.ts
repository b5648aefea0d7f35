/**
 * The scorer registry: turns a validated definition from a scoring file into a `Scorer` at its
 * version. Rules are built here; the other layers register a builder for their type, so the
 * scoring work queue never learns which layer a scorer belongs to.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';
import { ruleCheck, ruleValue } from './rule-scorers.js';
import type { Scorer, ScoreInput, ScoreValue } from './scorer.js';
import type { ScorerDefinition, ScoringConfig } from './scoring-config.js';
import { scorerVersion } from './scorer-version.js';

export type ScorerLayer = 'rule' | 'plugin' | 'judge';

/** A built scorer and what the store keeps about it. */
export interface BuiltScorer {
  scorer: Scorer;
  layer: ScorerLayer;
  definition: ScorerDefinition;
}

/** Builds a scorer of one type from its definition; `where` names it in errors (`scorers.2`). */
export type ScorerBuilder = (definition: ScorerDefinition, version: string, where: string) => BuiltScorer;

class RuleScorer implements Scorer {
  readonly kind = 'pass_fail';
  readonly judges: readonly string[] = [];
  constructor(
    readonly name: string,
    readonly version: string,
    private readonly check: (input: ScoreInput) => string | null,
    private readonly severity: 'hard' | 'soft',
  ) {}

  score(input: ScoreInput): Promise<ScoreValue[]> {
    return Promise.resolve([ruleValue(this.check(input), this.severity)]);
  }
}

export class ScorerRegistry {
  private readonly builders = new Map<string, ScorerBuilder>();
  private readonly loading = new Map<string, Promise<void>>();

  /**
   * Adds the builder of a layer's type (`code`, `judge`); a builder that must load first (the
   * plugin sandbox) is usable once `ready()` has resolved.
   */
  register(type: string, builder: ScorerBuilder | Promise<ScorerBuilder>): void {
    if (!(builder instanceof Promise)) {
      this.builders.set(type, builder);
      return;
    }
    const loaded = builder.then((b) => {
      this.builders.set(type, b);
      this.loading.delete(type);
    });
    // A builder that failed to load is reported by ready(), not as an unhandled rejection.
    loaded.catch(() => undefined);
    this.loading.set(type, loaded);
  }

  /** Resolves once every registered builder has loaded (rejects if one could not). */
  async ready(): Promise<void> {
    await Promise.all(this.loading.values());
  }

  build(definition: ScorerDefinition, where: string): BuiltScorer {
    const version = scorerVersion(definition);
    const builder = this.builders.get(definition.type);
    if (builder) return builder(definition, version, where);
    if (this.loading.has(definition.type)) {
      throw new PanoptesError('invalid_input', `${where}: ${definition.type} scorers are still loading; try again in a moment`, { where, retryable: true });
    }
    const check = ruleCheck(definition, where);
    return { scorer: new RuleScorer(definition.name, version, check, definition.severity ?? 'hard'), layer: 'rule', definition };
  }

  /** Every scorer of a scoring file, or the first definition that cannot be built, named. */
  buildAll(config: ScoringConfig): BuiltScorer[] {
    return config.scorers.map((d, i) => {
      try {
        return this.build(d, `scorers.${i}`);
      } catch (err) {
        if (err instanceof PanoptesError) throw err;
        throw new PanoptesError('invalid_input', `scorers.${i}: ${(err as Error).message}`, { where: `scorers.${i}` });
      }
    });
  }
}
