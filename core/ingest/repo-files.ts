/**
 * What a source (a folder, a tarball, a git diff) yields to the packer: the text files to pack, the
 * files left out and why, and in diff mode the unified diff. One shape for every source, so the
 * fitting and the prompt never know where the files came from.
 * Runs on: Node (core).
 */
import { setImmediate as turn } from 'node:timers/promises';
import { PanoptesError } from '../domain.js';
import type { LeftOutReason } from './file-rules.js';
import { isBinaryContent, leftOutByPath } from './file-rules.js';

export interface SourceFile {
  /** Relative to the repository's root, with `/` separators. */
  path: string;
  text: string;
  /**
   * A file decoded a megabyte at a time: the decoded slices, each flat, of which `text` is the
   * join. Reading the joined text (a slice of it, its last character) would copy all of it at
   * once, over a hundred milliseconds for a few megabytes on a busy machine; the pack reads these.
   */
  slices?: string[];
}

export interface LeftOutFile {
  path: string;
  reason: LeftOutReason;
}

export interface RepoFiles {
  /** The repository's name, for ids and the prompt's header: the folder's or tarball's base name. */
  name: string;
  kind: 'folder' | 'tarball' | 'diff';
  files: SourceFile[];
  leftOut: LeftOutFile[];
  /** Diff mode: the refs compared and `git diff`'s unified output. */
  diff?: { base: string; head: string; text: string };
}

/** Bytes decoded at once: a file of tens of megabytes is decoded a slice at a time, a turn of the event loop between. */
const DECODE_BYTES = 1 << 20;

async function decodeUtf8(content: Buffer): Promise<{ text: string; slices?: string[] }> {
  if (content.length <= DECODE_BYTES) return { text: content.toString('utf8') };
  // The streaming decoder keeps a character cut at a slice's end for the next slice.
  const decoder = new TextDecoder('utf-8');
  const slices: string[] = [];
  for (let at = 0; at < content.length; at += DECODE_BYTES) {
    slices.push(decoder.decode(content.subarray(at, at + DECODE_BYTES), { stream: true }));
    await turn();
  }
  slices.push(decoder.decode());
  const kept = slices.filter((t) => t !== '');
  // Joined by concatenation, which links the slices without copying them (a join would copy all at once).
  let text = '';
  for (const t of kept) text += t;
  return { text, slices: kept };
}

/** The default `--max-bytes`: a repository holding more bytes of packable files is refused. */
export const DEFAULT_MAX_BYTES = 50 * 1024 * 1024;

/** Collects files as a source reads them, holding the byte limit and the left-out rules in one place. */
export class RepoCollector {
  readonly files: SourceFile[] = [];
  readonly leftOut: LeftOutFile[] = [];
  private bytes = 0;

  constructor(
    private readonly source: string,
    private readonly maxBytes: number,
  ) {}

  /** Whether the path alone leaves the file out (recorded if so), before its content is read. */
  skipsPath(path: string): boolean {
    const reason = leftOutByPath(path);
    if (reason) this.leftOut.push({ path, reason });
    return reason !== undefined;
  }

  /** Counts a file's size against the limit, refusing the whole source once it is past it. */
  count(size: number): void {
    this.bytes += size;
    if (this.bytes > this.maxBytes) {
      throw new PanoptesError(
        'invalid_input',
        `${this.source} holds more than ${this.maxBytes} bytes of files to pack (--max-bytes ${this.maxBytes})`,
        { where: this.source },
      );
    }
  }

  leaveOut(path: string, reason: LeftOutReason): void {
    this.leftOut.push({ path, reason });
  }

  /** Adds a file's content: text is kept, binary content left out. */
  async add(path: string, content: Buffer): Promise<void> {
    if (await isBinaryContent(content)) this.leftOut.push({ path, reason: 'binary' });
    else this.files.push({ path, ...(await decodeUtf8(content)) });
  }

  /** Files in path order, so a pack of the same tree is the same prompt whatever order it was read in. */
  sorted(): { files: SourceFile[]; leftOut: LeftOutFile[] } {
    const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
    return { files: this.files.sort(byPath), leftOut: this.leftOut.sort(byPath) };
  }
}
