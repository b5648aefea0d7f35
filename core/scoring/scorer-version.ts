/**
 * A scorer's version: a hash of its whole definition (type, rules, plugin source, judge models,
 * rubric, sampling, severity), taken over a canonical JSON form so that key order in the scoring
 * file does not make a new version. An unchanged scorer keeps its version and re-scoring with it is
 * a no-op; any change makes a new version beside the old.
 * Runs on: Node (core).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

/** The first 16 hex digits of the sha256 of the canonical definition. */
export function scorerVersion(definition: unknown): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex').slice(0, 16);
}
