/**
 * What a source (a folder, a tarball, a git diff) yields to the packer: the text files to pack, the
 * files left out and why, and in diff mode the unified diff. One shape for every source, so the
 * fitting and the prompt never know where the files came from.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';
import type { LeftOutReason } from './file-rules.js';
import { isBinaryContent, leftOutByPath } from './file-rules.js';

export interface SourceFile {
  /** Relative to the repository's root, with `/` separators. */
  path: string;
  text: string;
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
    else this.files.push({ path, text: content.toString('utf8') });
  }

  /** Files in path order, so a pack of the same tree is the same prompt whatever order it was read in. */
  sorted(): { files: SourceFile[]; leftOut: LeftOutFile[] } {
    const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
    return { files: this.files.sort(byPath), leftOut: this.leftOut.sort(byPath) };
  }
}
