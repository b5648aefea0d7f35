/**
 * `panoptes import csv|jsonl|parquet`: any table as vignettes. The prompt is one column
 * (`--prompt`) or a template over the columns (`--template "Q: {{question}}"`); `--target`,
 * `--id` and `--system` name columns; the other columns (or those `--metadata` lists) become
 * metadata. A column that is not in the table, or a template var that is not a column, is refused
 * naming the file and row.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';
import type { ImportOutcome, ImportedVignette, VignetteSink } from './imported-suite.js';
import { tableRows, type TableFormat } from './table-rows.js';
import { renderTemplate, templateVars, TemplateError } from './template.js';

export interface TableImportOptions {
  prompt?: string;
  template?: string;
  target?: string;
  id?: string;
  system?: string;
  /** Columns kept as metadata (default: every column not used above). */
  metadata?: string[];
}

/** A cell as JSON can hold it: parquet's 64-bit integers, dates and bytes made plain. */
export function plainValue(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(plainValue);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainValue(v)]));
  return value;
}

function text(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value as number | boolean);
}

export function checkTableOptions(opts: TableImportOptions): void {
  if ((opts.prompt === undefined) === (opts.template === undefined)) {
    throw new PanoptesError('invalid_input', 'give exactly one of --prompt COLUMN or --template TEXT', { where: opts.prompt === undefined ? '--prompt' : '--template' });
  }
}

export async function importTable(path: string, format: TableFormat, opts: TableImportOptions, sink: VignetteSink): Promise<ImportOutcome> {
  checkTableOptions(opts);
  const named = [opts.prompt, opts.target, opts.id, opts.system, ...(opts.metadata ?? [])].filter((c): c is string => c !== undefined);
  const used = new Set([opts.prompt, opts.target, opts.id, opts.system].filter((c): c is string => c !== undefined));
  let n = 0;
  let withoutTarget = 0;
  for await (const { row: raw, where } of tableRows(path, format)) {
    const row = plainValue(raw) as Record<string, unknown>;
    if (n === 0) {
      const columns = Object.keys(row);
      const wanted = [...named, ...(opts.template !== undefined ? templateVars(opts.template) : [])];
      const missing = wanted.filter((c) => !Object.hasOwn(row, c));
      if (missing.length > 0) {
        throw new PanoptesError('invalid_input', `${where}: no column ${missing.map((m) => `"${m}"`).join(', ')}; the columns are ${columns.map((c) => `"${c}"`).join(', ')}`, { where });
      }
    }
    n += 1;
    let prompt: string | undefined;
    if (opts.template !== undefined) {
      try {
        prompt = renderTemplate(opts.template, row);
      } catch (err) {
        if (err instanceof TemplateError) throw new PanoptesError('invalid_input', `${where}: the template ${err.message}`, { where });
        throw err;
      }
    } else prompt = text(row[opts.prompt!]);
    if (prompt === undefined || prompt.trim() === '') throw new PanoptesError('invalid_input', `${where}: the prompt is empty`, { where });
    const id = opts.id !== undefined ? text(row[opts.id]) : String(n);
    // A row of a JSONL table may lack a column the first row had: an id made up for it would pair wrongly.
    if (id === undefined || id.trim() === '') throw new PanoptesError('invalid_input', `${where}: no id in column "${opts.id}"`, { where });
    const v: ImportedVignette = { id, prompt };
    const system = opts.system !== undefined ? text(row[opts.system]) : undefined;
    const target = opts.target !== undefined ? text(row[opts.target]) : undefined;
    if (system !== undefined) v.system = system;
    if (target !== undefined) v.target = target;
    else if (opts.target !== undefined) withoutTarget += 1;
    const keep = opts.metadata ?? Object.keys(row).filter((c) => !used.has(c));
    if (keep.length > 0) v.metadata = Object.fromEntries(keep.map((c) => [c, row[c] ?? null]));
    await sink(v, where);
  }
  const notes = withoutTarget > 0 ? [{ what: `rows without a target (${withoutTarget})`, why: `no value in column "${opts.target}": their vignettes have no target, and the match scorer fails them (nothing to compare with)` }] : [];
  return { scorers: opts.target !== undefined ? [{ name: 'match', type: 'match' }] : [], notes };
}
