/**
 * A scoring file's text as the object the contract takes: JSON or YAML, a syntax error naming its
 * line. Only the outline (an object with a non-empty `scorers` list) is checked here; what each
 * definition means is the engine's to check, and its error names the field.
 * Runs on: renderer.
 */
import { YAMLParseError, parse as parseYaml } from 'yaml';
import type { ScoringConfig } from '../api/types.js';

export type ParsedScoring = { config: ScoringConfig; error: null } | { config: null; error: string };

/** Text that opens with `{` is read as JSON, anything else as YAML; a syntax error names its line. */
function parseText(text: string): { value: unknown } | { error: string } {
  if (text.trimStart().startsWith('{')) {
    try {
      return { value: JSON.parse(text) as unknown };
    } catch (err) {
      const pos = /position (\d+)/.exec((err as Error).message);
      const line = pos ? `line ${text.slice(0, Number(pos[1])).split('\n').length}: ` : '';
      return { error: `${line}not valid JSON: ${(err as Error).message}` };
    }
  }
  try {
    return { value: parseYaml(text, { maxAliasCount: 100 }) as unknown };
  } catch (err) {
    const line = err instanceof YAMLParseError && err.linePos ? `line ${err.linePos[0].line}: ` : '';
    return { error: `${line}not valid YAML: ${(err as Error).message.split('\n')[0]}` };
  }
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
