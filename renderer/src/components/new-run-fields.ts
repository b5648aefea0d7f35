/**
 * The New run form's fields as values: which fields there are, their errors, how a typed number is
 * read (whole within bounds, or optional with blank meaning "the model's default"), and which
 * field an error from the engine names, so it is shown beside that field.
 * Runs on: renderer.
 */
import type { ApiError } from '../api/client.js';

export type FieldName = 'manifest' | 'models' | 'epochs' | 'concurrency' | 'temperature' | 'maxTokens' | 'seed' | 'scoring' | 'template' | 'thinkingBudget';
/** An absent or undefined field has no error. */
export type FieldErrors = { [F in FieldName]?: string | undefined };

/** A whole number within bounds, or null. */
export function wholeNumber(text: string, min: number, max: number): number | null {
  if (!/^\s*\d+\s*$/.test(text)) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
}

/** An optional number field: blank is "the model's default", else a number within bounds. */
export function optionalNumber(text: string, min: number, max: number, whole: boolean): number | null | 'invalid' {
  if (text.trim() === '') return null;
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || n > max || (whole && !Number.isInteger(n))) return 'invalid';
  return n;
}

/** The sampling the fields ask for: only the numbers given (blank and invalid fields say nothing). */
export function samplingOf(
  temperature: number | null | 'invalid',
  maxTokens: number | null | 'invalid',
  seed: number | null | 'invalid',
): { temperature?: number; maxTokens?: number; seed?: number } {
  return {
    ...(typeof temperature === 'number' ? { temperature } : {}),
    ...(typeof maxTokens === 'number' ? { maxTokens } : {}),
    ...(typeof seed === 'number' ? { seed } : {}),
  };
}

/** Which field a server error names (`models[1]`, `epochs`, `manifest.jsonl:3`, ...). */
export function fieldOf(err: ApiError): FieldName | null {
  const where = err.where ?? '';
  if (err.code === 'manifest_invalid' || where.startsWith('manifest')) return 'manifest';
  if (where.startsWith('models')) return 'models';
  if (where === 'epochs') return 'epochs';
  if (where === 'concurrency') return 'concurrency';
  if (where === 'sampling.temperature') return 'temperature';
  if (where === 'sampling.maxTokens') return 'maxTokens';
  if (where === 'sampling.seed') return 'seed';
  if (where.startsWith('scorers')) return 'scoring';
  if (where.startsWith('template')) return 'template';
  if (where === 'sampling.thinkingBudget') return 'thinkingBudget';
  return null;
}
