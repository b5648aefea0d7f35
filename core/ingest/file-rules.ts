/**
 * Which files of a repository a pack leaves out, and how much each kept file is worth when the pack
 * must shrink to fit a context window. Left out: what no reviewer reads as text (binaries), what a
 * tool wrote (lockfiles), what is someone else's code (`node_modules`, vendored folders) and the
 * repository's own bookkeeping (`.git`). The rest is ranked into tiers, dropped lowest first.
 * Runs on: Node (core).
 */
import { isBinaryFile } from 'isbinaryfile';

/** Why a file is not in the pack at all (`special`: a FIFO, a socket or a device, never read). */
export type LeftOutReason = 'binary' | 'lockfile' | 'dependency' | 'vcs' | 'vendored' | 'symlink' | 'special';

/** Folders whose content is never packed, at any depth. */
const SKIPPED_FOLDERS: Record<string, LeftOutReason> = {
  '.git': 'vcs',
  '.hg': 'vcs',
  '.svn': 'vcs',
  node_modules: 'dependency',
  bower_components: 'dependency',
  '.venv': 'dependency',
  venv: 'dependency',
  __pycache__: 'dependency',
  vendor: 'vendored',
  third_party: 'vendored',
  'third-party': 'vendored',
};

const LOCKFILES = new Set([
  'package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'bun.lockb', 'bun.lock',
  'Cargo.lock', 'Gemfile.lock', 'poetry.lock', 'Pipfile.lock', 'composer.lock', 'go.sum', 'uv.lock',
  'flake.lock', 'mix.lock', 'Podfile.lock', 'packages.lock.json', 'pubspec.lock',
]);

/** Extensions that are binary whatever their first bytes look like (compressed or media formats). */
const BINARY_EXTENSIONS = /\.(png|jpe?g|gif|bmp|ico|webp|avif|tiff?|psd|pdf|zip|gz|tgz|bz2|xz|7z|rar|zst|jar|war|class|o|a|so|dylib|dll|exe|wasm|node|pyc|woff2?|ttf|otf|eot|mp[34]|m4a|wav|ogg|flac|mov|avi|mkv|webm|sqlite3?|db|bin|dat)$/i;

/** Why a folder is skipped, or undefined when its files may be packed. */
export function skippedFolder(name: string): LeftOutReason | undefined {
  return Object.hasOwn(SKIPPED_FOLDERS, name) ? SKIPPED_FOLDERS[name] : undefined;
}

/** Why a file is left out by its path alone (a folder on the way, a lockfile, a binary extension). */
export function leftOutByPath(path: string): LeftOutReason | undefined {
  const parts = path.split('/');
  for (const folder of parts.slice(0, -1)) {
    const reason = skippedFolder(folder);
    if (reason) return reason;
  }
  const name = parts[parts.length - 1]!;
  if (LOCKFILES.has(name)) return 'lockfile';
  if (BINARY_EXTENSIONS.test(name)) return 'binary';
  return undefined;
}

/** Whether a file's content is binary (NUL bytes, invalid text encodings in its first bytes). */
export async function isBinaryContent(content: Buffer): Promise<boolean> {
  return content.length > 0 && (await isBinaryFile(content, content.length));
}

/**
 * How a kept file ranks when the pack must shrink: `bulk` (generated, minified, data, snapshots) goes
 * first, then `code` (sources and everything else), `intent` (tests and docs) last. Tests and docs are
 * kept longest because they say what the code is meant to do: with them a reviewer can judge the
 * code it does see and name what it could not; generated and bulk files tell it next to nothing.
 */
export type FileTier = 'bulk' | 'code' | 'intent';
export const TIER_DROP_ORDER: readonly FileTier[] = ['bulk', 'code', 'intent'];

const GENERATED_FOLDERS = /(^|\/)(dist|build|out|target|coverage|generated|gen|\.next|\.nuxt)\//;
const GENERATED_NAMES = /(\.min\.(js|css)|\.map|\.snap|\.pb\.go|_pb2\.py|\.generated\.\w+|\.g\.dart)$/i;
const DATA_NAMES = /\.(csv|tsv|jsonl|ndjson|parquet|svg|xml|log)$/i;
const TEST_PATH = /(^|\/)(tests?|__tests__|spec|e2e)\/|[._-](test|spec)\.\w+$|(^|\/)test_[^/]+\.py$/i;
const DOC_PATH = /(^|\/)docs?\/|\.(md|mdx|rst|adoc|txt)$|(^|\/)(README|CHANGELOG|CONTRIBUTING|LICENSE)[^/]*$/i;
/** A line this long is a machine's, not a person's. */
const GENERATED_LINE_CHARS = 1000;
/** Characters past which a single file counts as bulk whatever it is. */
const BULK_FILE_CHARS = 200_000;

export function tierOf(path: string, text: string): FileTier {
  if (GENERATED_FOLDERS.test(path) || GENERATED_NAMES.test(path) || DATA_NAMES.test(path)) return 'bulk';
  if (text.length > BULK_FILE_CHARS || /^\s*(\/\/|#|\/\*)\s*(@generated|Code generated|DO NOT EDIT|AUTO-GENERATED)/im.test(text.slice(0, 500))) return 'bulk';
  if (TEST_PATH.test(path) || DOC_PATH.test(path)) return 'intent';
  if (longestLine(text) > GENERATED_LINE_CHARS) return 'bulk';
  return 'code';
}

function longestLine(text: string): number {
  let longest = 0;
  let start = 0;
  for (;;) {
    const end = text.indexOf('\n', start);
    const stop = end === -1 ? text.length : end;
    if (stop - start > longest) longest = stop - start;
    if (end === -1) return longest;
    start = end + 1;
  }
}
