/**
 * Reads a scoring file (JSON when it opens with `{`, else YAML: core/common/scoring-text.ts, the
 * app's rule too) into a scoring config, parsed as the scorer admission parses one
 * (core/scoring/scorer-admission.ts). A syntax error names the file and line; a bad definition
 * names the file and the field; building and checking it is the engine's admission. A code plugin's `file` is read here, and a pairwise
 * judge's `baselineFile` resolved, relative to the scoring file.
 * Runs on: Node (core).
 */
import { dirname, resolve } from 'node:path';
import { parseScoringSyntax } from '../common/scoring-text.js';
import { PanoptesError } from '../domain.js';
import { readRegularText } from '../regular-file.js';
import { CodeDefinitionSchema } from '../scoring/plugin/code-definition.js';
import { parseScoringConfig } from '../scoring/scorer-admission.js';
import type { ScorerDefinition, ScoringConfig } from '../scoring/scoring-config.js';
import { formatZodIssues } from '../validation.js';

export async function readScoringFile(path: string): Promise<ScoringConfig> {
  let text: string;
  try {
    text = await readRegularText(path);
  } catch (err) {
    throw new PanoptesError('invalid_input', `${path}: cannot read the scoring file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { where: path });
  }
  const syntax = parseScoringSyntax(text);
  if (!syntax.ok) {
    const where = `${path}${syntax.line === null ? '' : `:${syntax.line}${syntax.column === null ? '' : `:${syntax.column}`}`}`;
    throw new PanoptesError('invalid_input', `${where}: not valid ${syntax.syntax}: ${syntax.message}`, { where });
  }
  const parsed = parseScoringConfig(syntax.value, path);
  return { scorers: await Promise.all(parsed.scorers.map((s, i) => readPluginFile(path, resolveBaselineFile(path, s), i))) };
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
