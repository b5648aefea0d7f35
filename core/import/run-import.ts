/**
 * One entry for every import source: reads the source and writes DIR/manifest.jsonl,
 * DIR/scorers.json and DIR/import-report.json all at once, or nothing.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';
import type { ImportOutcome, VignetteSink } from './imported-suite.js';
import { importInspect } from './inspect-import.js';
import { importPromptfoo, type PromptfooImportOptions } from './promptfoo-import.js';
import { importTable, type TableImportOptions } from './table-import.js';
import { formatOfName } from './table-rows.js';
import { writeImport, type ImportSummary } from './write-import.js';

export const IMPORT_SOURCES = ['promptfoo', 'inspect', 'csv', 'jsonl', 'parquet'] as const;
export type ImportSource = (typeof IMPORT_SOURCES)[number];

export interface ImportRequest {
  source: ImportSource;
  path: string;
  outDir: string;
  promptfoo: PromptfooImportOptions;
  table: TableImportOptions;
  /** inspect: `input=question,target=answer`, Sample fields from other columns. */
  fields?: string | undefined;
}

function producerOf(req: ImportRequest): (sink: VignetteSink) => Promise<ImportOutcome> {
  switch (req.source) {
    case 'promptfoo':
      return (sink) => importPromptfoo(req.path, req.promptfoo, sink);
    case 'inspect':
      return (sink) => importInspect(req.path, req.fields, sink);
    case 'csv':
    case 'jsonl':
    case 'parquet': {
      const named = formatOfName(req.path);
      if (named !== undefined && named !== req.source && !(named === 'json' && req.source === 'jsonl')) {
        throw new PanoptesError('invalid_input', `${req.path} is named like a ${named} file, not ${req.source}`, { where: req.path });
      }
      return (sink) => importTable(req.path, req.source as 'csv' | 'jsonl' | 'parquet', req.table, sink);
    }
  }
}

export function runImport(req: ImportRequest): Promise<ImportSummary> {
  return writeImport(req.outDir, req.path, producerOf(req));
}
