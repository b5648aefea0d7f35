/**
 * Reads a scoring file (JSON, or YAML by its .yaml/.yml extension) into a validated scoring
 * config. A syntax error names the file and line; a bad definition names the file and the field.
 * A code plugin's `file` is read here, and a pairwise judge's `baselineFile` resolved, relative to
 * the scoring file.
 * Runs on: Node (core).
 */
import { dirname, resolve } from 'node:path';
import { YAMLParseError, parse as parseYaml } from 'yaml';
import { PanoptesError } from '../domain.js';
import { readRegularText } from '../regular-file.js';
import { CodeDefinitionSchema } from '../scoring/plugin/code-definition.js';
import { ScoringConfigSchema, type ScorerDefinition, type ScoringConfig } from '../scoring/scoring-config.js';
import { firstIssuePath, formatZodIssues } from '../validation.js';

export async function readScoringFile(path: string): Promise<ScoringConfig> {
  let text: string;
  try {
    text = await readRegularText(path);
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
      const where = `${path}:${jsonErrorPlace(text, (err as Error).message)}`;
      throw new PanoptesError('invalid_input', `${where}: not valid JSON: ${(err as Error).message}`, { where });
    }
  }
  const parsed = ScoringConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const field = firstIssuePath(parsed.error);
    throw new PanoptesError('invalid_input', `${path}: ${formatZodIssues(parsed.error)}`, { where: field ? `${path}: ${field}` : path });
  }
  return { scorers: await Promise.all(parsed.data.scorers.map((s, i) => readPluginFile(path, resolveBaselineFile(path, s), i))) };
}

/**
 * Where JSON.parse stopped, as line:column (both from 1): from the position its message gives, or
 * the end of the text for an input that ended too soon.
 */
function jsonErrorPlace(text: string, message: string): string {
  const lineCol = /line (\d+) column (\d+)/.exec(message);
  if (lineCol) return `${lineCol[1]}:${lineCol[2]}`;
  const pos = /position (\d+)/.exec(message);
  const offset = pos ? Math.min(Number(pos[1]), text.length) : text.length;
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `${line}:${offset - (before.lastIndexOf('\n') + 1) + 1}`;
}

/** A pairwise judge's baseline file, given relative to the scoring file, as a path the engine reads wherever it runs from. */
function resolveBaselineFile(scoringPath: string, def: ScorerDefinition): ScorerDefinition {
  if (def.type !== 'judge' || def.baselineFile === undefined) return def;
  return { ...def, baselineFile: resolve(dirname(scoringPath), def.baselineFile) };
}

/**
 * A code plugin given as a file: its content, read relative to the scoring file, becomes the
 * definition's `code` (the file's name stays beside it), so the version is a hash of what the file
 * holds and editing it makes a new version.
 */
async function readPluginFile(scoringPath: string, def: ScorerDefinition, i: number): Promise<ScorerDefinition> {
  if (def.type !== 'code' || def.file === undefined) return def;
  const where = `${scoringPath}: scorers.${i}.file`;
  if (def.code !== undefined) throw new PanoptesError('invalid_input', `${where}: give code or file, not both`, { where });
  const file = resolve(dirname(scoringPath), def.file);
  let code: string;
  try {
    code = await readRegularText(file);
  } catch (err) {
    throw new PanoptesError('invalid_input', `${where}: cannot read "${def.file}" (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { where });
  }
  const checked = CodeDefinitionSchema.safeParse({ ...def, code });
  if (!checked.success) throw new PanoptesError('invalid_input', `${where}: ${formatZodIssues(checked.error)}`, { where });
  return checked.data;
}
