/**
 * A run's append-only responses.jsonl: a projection of the run's records in the database, one line
 * per record in sequence order, each carrying its `seq`. The database is the source of truth; a line
 * is appended only once its record is durable there, and the file is brought back in line with the
 * database whenever it may have drifted:
 *
 * - `reconcile` (when a run is claimed or resumed, and at its end unless the file is known whole) reads the file against the
 *   records line by line. The first line that is torn, foreign, out of order or extra is cut with
 *   everything after it, and what the file then lacks is written from the database. A file deleted
 *   or replaced during the run is rebuilt the same way.
 * - During the run, a write that fails (the disk full for a moment) or a file cut short or replaced
 *   under it marks the log behind: the next appends first cut any partial write, then catch up from
 *   the database a bounded page at a time, so no record is skipped and none is written twice.
 *
 * Each step reads or writes a bounded page, and `reconcile` yields between pages, so a file of any
 * size never holds the event loop.
 * Runs on: Node (core).
 */
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { RunId, StoredResponse } from '../domain.js';
import { toJsonlLine } from '../export.js';
import { responsesPath } from '../paths.js';
import type { RunFence } from '../store/run-fence.js';
import type { Store } from '../store/store.js';

/** Records written per step when the file catches up with the database. */
const PAGE = 1000;
/** Bytes read per step when the file is checked. */
const READ_CHUNK = 1 << 20;
const NEWLINE = 0x0a;

/** What `reconcile` found and did. */
export interface Reconciliation {
  /** Bytes cut from the end of the file: a torn, foreign or out-of-order line and all after it. */
  cutBytes: number;
  /** Records written from the database. */
  written: number;
}

export class ResponseLog {
  readonly path: string;
  private fd = -1;
  /** The inode `fd` has open: another inode at `path` means the file was deleted or replaced. */
  private ino = 0;
  /** Bytes at the start of the file known to be whole lines of this run, in order. */
  private end = 0;
  private lastSeq = 0;
  /** Set when a write failed or the file changed under the log: catch up from the database first. */
  private behind = false;

  private constructor(
    private readonly store: Store,
    dataDir: string,
    readonly runId: RunId,
    private readonly fence: RunFence | undefined,
  ) {
    this.path = responsesPath(dataDir, runId);
  }

  /**
   * Opens (creating) the run's log. The file is trusted up to its last complete line until
   * `reconcile` has checked it; `fence`, when given, guards every write with the run's ownership.
   */
  static open(store: Store, dataDir: string, runId: RunId, fence?: RunFence): ResponseLog {
    const log = new ResponseLog(store, dataDir, runId, fence);
    mkdirSync(dirname(log.path), { recursive: true });
    log.openFile();
    log.adoptTail();
    return log;
  }

  /** Checks the whole file against the database, cuts what is not the run's, and writes what it lacks. */
  async reconcile(): Promise<Reconciliation> {
    if (this.moved()) this.openFile();
    const records = this.store.queries.iterateResponses(this.runId);
    let next = records.next();
    let verified = 0;
    let lastSeq = 0;
    let pos = 0;
    let carry = Buffer.alloc(0);
    const size = fstatSync(this.fd).size;
    check: while (pos < size) {
      const chunk = Buffer.alloc(Math.min(READ_CHUNK, size - pos));
      const read = readSync(this.fd, chunk, 0, chunk.length, pos);
      if (read === 0) break;
      pos += read;
      const bytes = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, read)]) : chunk.subarray(0, read);
      let start = 0;
      for (let nl = bytes.indexOf(NEWLINE); nl >= 0; nl = bytes.indexOf(NEWLINE, start)) {
        if (next.done || !bytes.subarray(start, nl).equals(Buffer.from(toJsonlLine(next.value)))) break check;
        lastSeq = next.value.seq;
        verified += nl + 1 - start;
        start = nl + 1;
        next = records.next();
      }
      carry = bytes.subarray(start);
      await yieldToLoop();
    }
    const cutBytes = size - verified;
    if (cutBytes > 0) this.write(() => ftruncateSync(this.fd, verified));
    this.end = verified;
    this.lastSeq = lastSeq;
    let written = 0;
    while (!next.done) {
      const page: StoredResponse[] = [];
      for (; !next.done && page.length < PAGE; next = records.next()) page.push(next.value);
      this.writeLines(page);
      written += page.length;
      await yieldToLoop();
    }
    this.behind = false;
    return { cutBytes, written };
  }

  /**
   * At a run's end: nothing to do when the file is known whole (no write failed, nothing changed it
   * since it was checked, and its last line is the run's last record); a full `reconcile` otherwise.
   */
  async finish(): Promise<Reconciliation> {
    if (!this.behind && !this.changedUnderneath() && this.lastSeq === this.store.queries.lastRecordSeq(this.runId)) {
      return { cutBytes: 0, written: 0 };
    }
    return this.reconcile();
  }

  /** Appends records that are durable in the database (in sequence order). */
  append(records: readonly StoredResponse[]): void {
    const last = records.at(-1);
    if (!last) return;
    if (!this.behind && this.changedUnderneath()) this.behind = true;
    if (this.behind) return this.catchUp(last.seq);
    this.writeLines(records.filter((r) => r.seq > this.lastSeq));
  }

  close(): void {
    if (this.fd >= 0) {
      closeSync(this.fd);
      this.fd = -1;
    }
  }

  /** Writes a page of what the database holds past the last whole line, up to `upTo`: the rest waits for the next append. */
  private catchUp(upTo: number): void {
    if (this.moved()) {
      // Deleted or replaced: what is at the path now is not known to hold any of the run.
      this.openFile();
      this.write(() => ftruncateSync(this.fd, 0));
      this.end = 0;
      this.lastSeq = 0;
    }
    const size = fstatSync(this.fd).size;
    if (size > this.end) this.write(() => ftruncateSync(this.fd, this.end)); // a partial write, or lines not ours
    else if (size < this.end) this.adoptTail(); // cut short by someone else: trust what is left up to its last whole line
    const page: StoredResponse[] = [];
    for (const r of this.store.queries.iterateResponses(this.runId, this.lastSeq, PAGE)) {
      if (r.seq > upTo || page.length === PAGE) break;
      page.push(r);
    }
    this.writeLines(page);
    this.behind = page.length === PAGE && page.at(-1)!.seq < upTo;
  }

  private writeLines(records: readonly StoredResponse[]): void {
    if (records.length === 0) return;
    const bytes = Buffer.from(records.map((r) => toJsonlLine(r) + '\n').join(''));
    this.write(() => {
      try {
        // The file is opened for appending: every write lands at its end, whatever the offset.
        for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done);
      } catch (err) {
        // The next append cuts whatever part of these lines reached the file, then writes them from the database.
        this.behind = true;
        throw err;
      }
    });
    this.end += bytes.length;
    this.lastSeq = records.at(-1)!.seq;
  }

  /** Runs a write under the run's fence when there is one: only the run's owner writes its log. */
  private write(fn: () => void): void {
    if (this.fence) this.store.runs.fenced(this.fence, fn);
    else fn();
  }

  private openFile(): void {
    this.close();
    this.fd = openSync(this.path, 'a+');
    this.ino = fstatSync(this.fd).ino;
  }

  private moved(): boolean {
    try {
      return statSync(this.path).ino !== this.ino;
    } catch {
      return true;
    }
  }

  private changedUnderneath(): boolean {
    return this.moved() || fstatSync(this.fd).size !== this.end;
  }

  /** Takes the file as whole up to its last complete line: cuts a torn tail and reads the last line's seq. */
  private adoptTail(): void {
    const size = fstatSync(this.fd).size;
    const { end, line } = lastCompleteLine(this.fd, size);
    if (end < size) this.write(() => ftruncateSync(this.fd, end));
    this.end = end;
    this.lastSeq = line === null ? 0 : seqOf(line);
  }
}

/** The `seq` a line of ours carries; 0 for a line that is not ours (the file is then trusted no further than the database). */
function seqOf(line: string): number {
  try {
    const seq = (JSON.parse(line) as { seq?: unknown }).seq;
    return typeof seq === 'number' && Number.isSafeInteger(seq) ? seq : 0;
  } catch {
    return 0;
  }
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
      const nl = tail.lastIndexOf(NEWLINE);
      if (nl < 0) continue;
      end = pos + nl + 1;
    }
    // The last complete line spans from the newline before it (or the file start) to `end`.
    const rel = end - pos;
    const prev = rel >= 2 ? tail.lastIndexOf(NEWLINE, rel - 2) : -1;
    if (prev >= 0 || pos === 0) {
      return { end, line: tail.subarray(prev + 1, rel - 1).toString('utf8') };
    }
  }
  return { end: end < 0 ? 0 : end, line: end < 0 ? null : tail.subarray(0, end - 1).toString('utf8') };
}
