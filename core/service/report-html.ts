/**
 * A run's report as one self-contained HTML page (scoring/html-report.ts), the contract's
 * `reportHtml`: the report and its vignette table read through the contract, the page returned,
 * or written whole to a temporary file beside `outPath` and renamed into place (durably: a failure
 * leaves no half page). The CLI's `report --html`, the HTTP API's `GET /runs/:id/report.html` and
 * the app's *Save report* all come here.
 * Runs on: Node (core).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { replaceAtomically, temporaryPathFor } from '../atomic-write.js';
import { PanoptesError } from '../domain.js';
import { buildHtmlReport } from '../scoring/html-report.js';
import type { ControlApi, HtmlReportResult } from './contract.js';
import type { ValidInput } from './contract-dispatcher.js';
import { collectReportVignettes, DEFAULT_REPORT_VIGNETTES } from './report-vignettes.js';

/** The name a saved page suggests: the run and the scorer. */
export function reportFileName(runId: string, scorer: string): string {
  return `${runId}-${scorer.replace(/[^\w.-]+/g, '_')}-report.html`;
}

export async function reportHtmlOf(
  api: Pick<ControlApi, 'report' | 'scoreMatrix' | 'responses'>,
  input: ValidInput<'reportHtml'>,
  now: Date = new Date(),
): Promise<HtmlReportResult> {
  const { vignettes: limit, outPath, ...asked } = input;
  const report = await api.report(asked);
  // The report's own scorer and reducer: named, they are the ones asked for; else those the report chose.
  const vignettes = await collectReportVignettes(api, { runId: input.runId, scorer: report.scorer, reducer: report.reducer, limit: limit ?? DEFAULT_REPORT_VIGNETTES });
  const html = buildHtmlReport(report, vignettes, now.toISOString());
  const result = { scorer: report.scorer, fileName: reportFileName(input.runId, report.scorer), rows: vignettes.rows.length, total: vignettes.total };
  if (outPath === undefined) return { ...result, html };
  const path = resolve(outPath);
  const temp = temporaryPathFor(path);
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(temp, html, 'utf8');
    await replaceAtomically(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw new PanoptesError('invalid_input', `cannot write ${path}: ${(err as Error).message}`, { where: 'outPath' });
  }
  return { ...result, path };
}
