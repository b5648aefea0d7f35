/**
 * A scoring file's text as the object the contract takes: JSON or YAML, a syntax error naming its
 * line. Only the outline (an object with a non-empty `scorers` list) is checked here; what each
 * definition means is the engine's to check, and its error names the field.
 * Runs on: renderer.
 */
import { parseScoringSyntax } from '../../../core/common/scoring-text.js';
import type { ScoringConfig } from '../api/types.js';

export type ParsedScoring = { config: ScoringConfig; error: null } | { config: null; error: string };

/** The text as a value by the command line's rule (core/common/scoring-text.ts); a syntax error names its line. */
function parseText(text: string): { value: unknown } | { error: string } {
  const syntax = parseScoringSyntax(text);
  if (syntax.ok) return { value: syntax.value };
  return { error: `${syntax.line === null ? '' : `line ${syntax.line}: `}not valid ${syntax.syntax}: ${syntax.message}` };
}

/** The scoring file's text as the object the contract takes, or why it is not one. */
export function parseScoringText(text: string): ParsedScoring {
  const parsed = parseText(text);
  if ('error' in parsed) return { config: null, error: parsed.error };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Array.isArray((value as { scorers?: unknown }).scorers)) {
    return { config: null, error: 'expected an object with a "scorers" list, like {"scorers": [{"name": "exact", "type": "match"}]}' };
  }
  if ((value as { scorers: unknown[] }).scorers.length === 0) return { config: null, error: 'scorers: name at least one scorer' };
  // What each definition means is the engine's to check (it answers with the field at fault).
  return { config: value as ScoringConfig, error: null };
}
