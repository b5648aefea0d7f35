/**
 * Reads a scoring file (JSON, or YAML by its .yaml/.yml extension) into a validated scoring
 * config. A syntax error names the file and line; a bad definition names the file and the field.
 * Runs on: Node (core).
 */
import { readFile } from 'node:fs/promises';
import { YAMLParseError, parse as parseYaml } from 'yaml';
import { PanoptesError } from '../domain.js';
import { ScoringConfigSchema, type ScoringConfig } from '../scoring/scoring-config.js';
import { firstIssuePath, formatZodIssues } from '../validation.js';

export async function readScoringFile(path: string): Promise<ScoringConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new PanoptesError('invalid_input', `${path}: cannot read the scoring file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { where: path });
  }
  let raw: unknown;
  if (/\.ya?ml$/i.test(path)) {
    try {
      raw = parseYaml(text, { maxAliasCount: 100 }) as unknown;
    } catch (err) {
      const line = err instanceof YAMLParseError ? err.linePos?.[0]?.line : undefined;
      throw new PanoptesError('invalid_input', `${path}${line ? `:${line}` : ''}: not valid YAML: ${(err as Error).message.split('\n')[0]}`, {
        where: `${path}${line ? `:${line}` : ''}`,
      });
    }
  } else {
    try {
      raw = JSON.parse(text) as unknown;
    } catch (err) {
      const pos = /position (\d+)/.exec((err as Error).message);
      const line = pos ? text.slice(0, Number(pos[1])).split('\n').length : undefined;
      throw new PanoptesError('invalid_input', `${path}${line ? `:${line}` : ''}: not valid JSON: ${(err as Error).message}`, {
        where: `${path}${line ? `:${line}` : ''}`,
      });
    }
  }
  const parsed = ScoringConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const field = firstIssuePath(parsed.error);
    throw new PanoptesError('invalid_input', `${path}: ${formatZodIssues(parsed.error)}`, { where: field ? `${path}: ${field}` : path });
  }
  return parsed.data;
}
