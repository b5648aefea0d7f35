/**
 * A scorer's version: a hash of its whole definition (type, rules, plugin source, judge models,
 * rubric, sampling, severity), taken over a canonical JSON form so that key order in the scoring
 * file does not make a new version. An unchanged scorer keeps its version and re-scoring with it is
 * a no-op; any change makes a new version beside the old.
 *
 * A rule's definition does not say what the rule does, Panoptes does: when a rule's semantics
 * change, its revision below goes up and is hashed with the definition, so scores of the old
 * semantics stay under the old version and the same definition is scored again under a new one,
 * never mixed. A rule at revision 1 (its first) hashes as it always did, so its versions stand.
 * Runs on: Node (core).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

/**
 * Revisions of the rules whose semantics changed. 2: `match` normalizes (case folding, NFKC,
 * punctuation and emphasis) and matches at the end, `numeric`, `exact`; `includes` and `banned`
 * fold case fully; `choice` takes the last stated option; `json` (and `json_parses`, which is the
 * same rule) finds a fenced block among prose; an empty target is refused, not passed.
 */
const RULE_REVISIONS: Readonly<Record<string, number>> = { match: 2, includes: 2, banned: 2, choice: 2, json: 2 };

function revisionOf(definition: unknown): number | undefined {
  if (definition === null || typeof definition !== 'object') return undefined;
  const d = definition as { type?: unknown; builtin?: unknown };
  const rule = d.type === 'code' && d.builtin === 'json_parses' ? 'json' : d.type;
  return typeof rule === 'string' && Object.hasOwn(RULE_REVISIONS, rule) ? RULE_REVISIONS[rule] : undefined;
}

/** The first 16 hex digits of the sha256 of the canonical definition (with its rule's revision past the first). */
export function scorerVersion(definition: unknown): string {
  const revision = revisionOf(definition);
  const hashed = revision === undefined ? definition : { ...(definition as object), ruleRevision: revision };
  return createHash('sha256').update(canonicalJson(hashed)).digest('hex').slice(0, 16);
}
