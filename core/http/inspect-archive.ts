/**
 * The inspect_ai export over HTTP: a run's EvalLogs (one `.json` per model and the set's
 * `eval-set.json`, as `export --format inspect` writes them) sent as one tar archive, which
 * `tar -xf` unpacks into a folder `inspect view --log-dir` opens. The logs are written by the
 * contract's exportRun into a temporary folder the server makes for the purpose (never a path a
 * client names), streamed from disk into the archive as the client reads, and removed when the
 * response ends, completed or not.
 * Runs on: Node (core).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { create as createTar } from 'tar';
import type { ExportResult } from '../service/contract.js';
import type { ContractDispatcher } from '../service/contract-dispatcher.js';

export const INSPECT_ARCHIVE_TYPE = 'application/x-tar';

export function inspectArchiveName(runId: string): string {
  return `${runId}-inspect.tar`;
}

/** The run's inspect logs as a tar stream; fails (and leaves nothing) before any byte when the export does. */
export async function inspectArchive(dispatcher: Pick<ContractDispatcher, 'invoke'>, runId: string): Promise<Readable> {
  const dir = await mkdtemp(join(tmpdir(), 'panoptes-inspect-'));
  const removeDir = () => void rm(dir, { recursive: true, force: true });
  let written: ExportResult;
  try {
    // In-process: the server, not the client, chose this folder.
    written = (await dispatcher.invoke('exportRun', { runId, format: 'inspect', outPath: dir })) as ExportResult;
  } catch (err) {
    removeDir();
    throw err;
  }
  const names = [...(written.files ?? []).map((f) => basename(f)), 'eval-set.json'];
  const archive = Readable.from(createTar({ cwd: dir, portable: true }, names));
  archive.once('close', removeDir);
  return archive;
}
