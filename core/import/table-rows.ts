/**
 * The rows of a table file as plain objects, streamed, each with where it came from
 * (`data.csv:12`, `data.jsonl:7`, `data.parquet row 40`): CSV with a header line (csv-parse),
 * JSONL one object a line, a JSON array, and parquet read one row group at a time (hyparquet).
 * A malformed row is an error naming the file and its line or row.
 * Runs on: Node (core).
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parse as parseCsv, CsvError } from 'csv-parse';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { PanoptesError } from '../domain.js';

export type TableFormat = 'csv' | 'jsonl' | 'json' | 'parquet';

export interface TableRow {
  row: Record<string, unknown>;
  where: string;
}

function bad(where: string, message: string): PanoptesError {
  return new PanoptesError('invalid_input', `${where}: ${message}`, { where });
}

/** The format a file's name says it is, or undefined. */
export function formatOfName(path: string): TableFormat | undefined {
  const ext = /\.(csv|jsonl|ndjson|json|parquet)$/i.exec(path)?.[1]?.toLowerCase();
  return ext === 'ndjson' ? 'jsonl' : (ext as TableFormat | undefined);
}

async function mustBeFile(path: string): Promise<void> {
  try {
    if (!(await stat(path)).isFile()) throw new Error('not a file');
  } catch (err) {
    throw new PanoptesError('invalid_input', `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { where: path });
  }
}

async function* csvRows(path: string): AsyncGenerator<TableRow> {
  const parser = createReadStream(path).pipe(parseCsv({ columns: true, bom: true, skip_empty_lines: true, info: true, relax_column_count: false }));
  try {
    for await (const item of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      yield { row: item.record, where: `${path}:${item.info.lines}` };
    }
  } catch (err) {
    if (err instanceof CsvError) throw bad(`${path}:${(err as CsvError & { lines?: number }).lines ?? '?'}`, `not valid CSV: ${err.message.replace(/^Invalid Record Length: /, '')}`);
    throw err;
  }
}

async function* jsonlRows(path: string): AsyncGenerator<TableRow> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  for await (const text of lines) {
    n += 1;
    if (text.trim() === '') continue;
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch (err) {
      throw bad(`${path}:${n}`, `invalid JSON: ${(err as Error).message}`);
    }
    if (typeof row !== 'object' || row === null || Array.isArray(row)) throw bad(`${path}:${n}`, 'expected a JSON object');
    yield { row: row as Record<string, unknown>, where: `${path}:${n}` };
  }
}

async function* jsonRows(path: string): AsyncGenerator<TableRow> {
  let rows: unknown;
  try {
    rows = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw bad(path, `invalid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(rows)) throw bad(path, 'expected a JSON array of objects');
  for (const [i, row] of rows.entries()) {
    if (typeof row !== 'object' || row === null || Array.isArray(row)) throw bad(`${path} item ${i + 1}`, 'expected a JSON object');
    yield { row: row as Record<string, unknown>, where: `${path} item ${i + 1}` };
  }
}

async function* parquetRows(path: string): AsyncGenerator<TableRow> {
  let file;
  let metadata;
  try {
    file = await asyncBufferFromFile(path);
    metadata = await parquetMetadataAsync(file);
  } catch (err) {
    throw bad(path, `not a parquet file: ${(err as Error).message}`);
  }
  let start = 0;
  for (const group of metadata.row_groups) {
    const end = start + Number(group.num_rows);
    const rows = await parquetReadObjects({ file, metadata, rowStart: start, rowEnd: end });
    for (const [i, row] of rows.entries()) yield { row, where: `${path} row ${start + i + 1}` };
    start = end;
  }
}

export async function* tableRows(path: string, format: TableFormat): AsyncGenerator<TableRow> {
  await mustBeFile(path);
  switch (format) {
    case 'csv':
      yield* csvRows(path);
      return;
    case 'jsonl':
      yield* jsonlRows(path);
      return;
    case 'json':
      yield* jsonRows(path);
      return;
    case 'parquet':
      yield* parquetRows(path);
      return;
  }
}
