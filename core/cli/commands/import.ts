/**
 * `panoptes import <promptfoo|inspect|csv|jsonl|parquet> SOURCE --out DIR`: a suite from another tool, or
 * any table, as a Panoptes manifest and scoring file, with a fidelity report of what could not be
 * carried over. Nothing is written unless the whole source imports.
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import { PanoptesError } from '../../domain.js';
import { EXIT, addCommonOptions, dataDirOf, reportError, type CommonOptions } from '../common.js';

interface ImportCliOptions extends CommonOptions {
  out: string;
  prompt?: string;
  template?: string;
  target?: string;
  id?: string;
  system?: string;
  metadata?: string[];
  judge: string;
  field?: string;
}

const SOURCES = ['promptfoo', 'inspect', 'csv', 'jsonl', 'parquet'];

export function registerImportCommand(program: Command): void {
  addCommonOptions(
    program
      .command('import')
      .description('turn a promptfoo config, an inspect_ai dataset or a CSV/JSONL/parquet table into a manifest and a scoring file')
      .argument('<kind>', SOURCES.join(' | '))
      .argument('<source>', 'the promptfooconfig.yaml, the dataset or the table file')
      .requiredOption('--out <dir>', 'the folder to write (new, or empty)')
      .option('--prompt <column>', 'tables: the column holding the prompt')
      .option('--template <text>', 'tables: the prompt as a template over the columns ("Q: {{question}}")')
      .option('--target <column>', 'tables: the column holding the expected answer')
      .option('--id <column>', 'tables: the column holding a unique id (default: the row number)')
      .option('--system <column>', 'tables: the column holding a system prompt')
      .option('--metadata <column...>', 'tables: the columns kept as metadata (default: all the others)')
      .option('--field <map>', 'inspect: Sample fields from other columns, as inspect\'s FieldSpec: input=question,target=answer,id=qid,choices=options')
      .option('--judge <model>', 'promptfoo: the catalog model that judges llm-rubric assertions', 'mock-judge'),
  ).action(async (kind: string, source: string, opts: ImportCliOptions, cmd: Command) => {
    try {
      if (!SOURCES.includes(kind)) throw new PanoptesError('invalid_input', `unknown import kind "${kind}": one of ${SOURCES.join(', ')}`, { where: '<kind>' });
      const [{ runImport }, { loadCatalog }, { catalogModelFor }, { formatImportSummary }] = await Promise.all([
        import('../../import/run-import.js'),
        import('../../service/load-catalog.js'),
        import('../../import/provider-match.js'),
        import('../../import/format-import.js'),
      ]);
      const catalog = loadCatalog(dataDirOf(opts), opts.catalog ?? []);
      if (kind === 'promptfoo' && !catalog.has(opts.judge)) throw new PanoptesError('invalid_input', `--judge: no model "${opts.judge}" in the catalog`, { where: '--judge' });
      const table = Object.fromEntries(
        (['prompt', 'template', 'target', 'id', 'system', 'metadata'] as const).filter((k) => opts[k] !== undefined).map((k) => [k, opts[k]]),
      );
      const summary = await runImport({
        source: kind as 'promptfoo',
        path: source,
        outDir: opts.out,
        promptfoo: { matchModel: (id) => catalogModelFor(catalog, id), judge: opts.judge },
        table,
        fields: opts.field,
      });
      process.stdout.write(formatImportSummary(summary));
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    }
  });
}
