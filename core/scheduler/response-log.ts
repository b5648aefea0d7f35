/**
 * A run's append-only responses.jsonl. The database is the source of truth: lines are appended
 * after their records commit, in sequence order, each carrying its `seq`. On open, a torn last
 * line (a crash mid-write) is cut off, and every record the database holds beyond the last
 * complete line is appended, so the file never lacks a landed record and never holds one twice.
 * Runs on: Node (core).
 */
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RunId, StoredResponse } from '../domain.js';
import { toJsonlLine } from '../export.js';
import type { Store } from '../store/store.js';

export function responsesPath(dataDir: string, runId: RunId): string {
  return join(dataDir, 'runs', runId, 'responses.jsonl');
}

/** Finds the end of the last complete line and that line's text, reading backwards in chunks. */
function lastCompleteLine(fd: number, size: number): { end: number; line: string | null } {
  const chunk = 64 * 1024;
  let pos = size;
  let tail = Buffer.alloc(0);
  let end = -1;
  while (pos > 0) {
    const n = Math.min(chunk, pos);
    pos -= n;
    const buf = Buffer.alloc(n);
    readSync(fd, buf, 0, n, pos);
    tail = Buffer.concat([buf, tail]);
    if (end < 0) {
      const nl = tail.lastIndexOf(0x0a);
      if (nl < 0) continue;
      end = pos + nl + 1;
    }
    // The last complete line spans from the newline before it (or the file start) to `end`.
    const rel = end - pos;
    const prev = rel >= 2 ? tail.lastIndexOf(0x0a, rel - 2) : -1;
    if (prev >= 0 || pos === 0) {
      return { end, line: tail.subarray(prev + 1, rel - 1).toString('utf8') };
    }
  }
  return { end: end < 0 ? 0 : end, line: end < 0 ? null : tail.subarray(0, end - 1).toString('utf8') };
}

export class ResponseLog {
  readonly path: string;
  private fd: number;
  private lastSeq: number;

  private constructor(path: string, fd: number, lastSeq: number) {
    this.path = path;
    this.fd = fd;
    this.lastSeq = lastSeq;
  }

  /** Opens (creating) the log, repairs a torn tail and completes it from the store. */
  static open(store: Store, dataDir: string, runId: RunId): ResponseLog {
    const path = responsesPath(dataDir, runId);
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(path, 'a+');
    const size = fstatSync(fd).size;
    const { end, line } = lastCompleteLine(fd, size);
    if (end < size) ftruncateSync(fd, end);
    let lastSeq = 0;
    if (line) {
      try {
        lastSeq = Number((JSON.parse(line) as { seq?: unknown }).seq) || 0;
      } catch {
        // A complete but unparsable last line cannot come from us; keep it and trust the store.
        lastSeq = 0;
      }
    }
    const log = new ResponseLog(path, fd, lastSeq);
    log.completeFrom(store, runId);
    return log;
  }

  /** Appends every record the store holds past this log's last line. */
  completeFrom(store: Store, runId: RunId): number {
    let batch: StoredResponse[] = [];
    let n = 0;
    for (const r of store.iterateResponses(runId, this.lastSeq)) {
      batch.push(r);
      if (batch.length >= 1000) {
        n += batch.length;
        this.append(batch);
        batch = [];
      }
    }
    n += batch.length;
    this.append(batch);
    return n;
  }

  /** Appends records that just landed (already in sequence order). */
  append(records: readonly StoredResponse[]): void {
    if (records.length === 0) return;
    let text = '';
    let last = this.lastSeq;
    for (const r of records) {
      if (r.seq <= last) continue;
      text += toJsonlLine(r) + '\n';
      last = r.seq;
    }
    if (!text) return;
    writeSync(this.fd, text);
    // Only once written: a failed write leaves these records to the completion on the next open.
    this.lastSeq = last;
  }

  close(): void {
    if (this.fd >= 0) {
      closeSync(this.fd);
      this.fd = -1;
    }
  }
}
