/**
 * An import's summary as the CLI prints it: what was written, the models its source named, and
 * the fidelity report (everything not carried over, and why).
 * Runs on: Node (core).
 */
import type { ImportSummary } from './write-import.js';

export function formatImportSummary(s: ImportSummary): string {
  const out = [`wrote ${s.vignettes} vignette${s.vignettes === 1 ? '' : 's'} to ${s.outDir}/manifest.jsonl`];
  out.push(s.scorers > 0 ? `wrote ${s.scorers} scorer${s.scorers === 1 ? '' : 's'} to ${s.outDir}/scorers.json` : 'no scorers to write (the source asserts nothing)');
  if (s.models.mapped.length > 0) out.push(`models: ${s.models.mapped.map((m) => (m.from === m.model ? m.model : `${m.model} (${m.from})`)).join(', ')}`);
  if (s.notes.length === 0) out.push('fidelity: everything was carried over');
  else {
    out.push(`fidelity: ${s.notes.length} thing${s.notes.length === 1 ? '' : 's'} not carried over exactly (also in ${s.outDir}/import-report.json):`);
    for (const n of s.notes) out.push(`  - ${n.what}: ${n.why}`);
  }
  return `${out.join('\n')}\n`;
}
