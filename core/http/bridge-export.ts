/**
 * Exports for the browser: a run's records streamed as a file download, JSONL (the shape of
 * responses.jsonl) or CSV, or its inspect_ai logs as one tar (inspect-archive.ts). A browser starts a download by following a link, which cannot carry a
 * bearer header, so the page first asks (with its token) for a one-time link: valid once, for one
 * run and format, for a minute. Scripts may use the bearer header directly instead.
 * The file is read in keyset pages of the store rather than through one open cursor: a cursor held
 * open while a slow client drains would keep the database connection busy and make the scheduler's
 * writes fail meanwhile.
 * Runs on: Node (core).
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { RunId } from '../domain.js';

/** `inspect`: the run's inspect_ai logs, one tar (inspect-archive.ts). */
export type ExportFormat = 'jsonl' | 'csv' | 'inspect';

const LINK_TTL_MS = 60_000;
const MAX_OPEN_LINKS = 256;

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  jsonl: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  inspect: 'application/x-tar',
};

export function exportFileName(runId: RunId, format: ExportFormat): string {
  return format === 'inspect' ? `${runId}-inspect.tar` : `${runId}-responses.${format}`;
}

interface Link {
  runId: RunId;
  format: ExportFormat;
  /** A CSV with a column per scorer. */
  scores: boolean;
  expiresAt: number;
}

/** One-time download links, forgotten once used or a minute after they were made. */
export class ExportLinks {
  private readonly links = new Map<string, Link>();

  create(runId: RunId, format: ExportFormat, scores = false): string {
    const now = Date.now();
    for (const [key, link] of this.links) if (link.expiresAt <= now) this.links.delete(key);
    // Insertion order is age order: past the cap, the oldest link goes.
    if (this.links.size >= MAX_OPEN_LINKS) this.links.delete(this.links.keys().next().value!);
    const key = randomBytes(24).toString('base64url');
    this.links.set(key, { runId, format, scores, expiresAt: now + LINK_TTL_MS });
    return key;
  }

  /** The link (now spent) when `key` is a live link for exactly this run and format; else null. */
  redeem(key: string | undefined, runId: RunId, format: ExportFormat): Link | null {
    if (key === undefined) return null;
    const link = this.links.get(key);
    if (!link) return null;
    this.links.delete(key);
    return link.runId === runId && link.format === format && link.expiresAt > Date.now() ? link : null;
  }
}

/** What an export is read from: the engine's `exportLines`, one line (with its newline) per record, a CSV's header first. */
export type ExportLines = (runId: RunId, format: Exclude<ExportFormat, 'inspect'>, scores: boolean) => Iterable<string>;

/** A run's export as a byte stream, pulled as the client drains it. */
export function exportStream(exportLines: ExportLines, runId: RunId, format: Exclude<ExportFormat, 'inspect'>, scores = false): Readable {
  return Readable.from(exportLines(runId, format, scores), { objectMode: false });
}
