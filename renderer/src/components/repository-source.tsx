/**
 * New run's "from a repository" source: a folder, a .tar.gz or a git folder's diff, on the engine's
 * machine, packed by the engine (`packRepository`, as `panoptes pack` packs it) for the models the
 * form has chosen, into a manifest kept in the data folder; the form then checks that manifest as if
 * it had been typed, and the run starts from it. A pack can be cancelled while it runs; the
 * engine's errors are shown beside the field they name (the source, the diff, the instruction).
 * Runs on: renderer.
 */
import { useRef, useState } from 'react';
import { ApiError } from '../api/client.js';
import { useClient } from '../api/client-context.js';
import type { MethodResult } from '../api/types.js';
import { formatInt } from '../format.js';
import { Field, controlProps } from './field.js';
import { ErrorNotice } from './notice.js';

type RepositoryPack = MethodResult<'packRepository'>;
type PackField = 'source' | 'diff' | 'instruction';

/** The field an engine error names, or null for one shown under the whole fieldset. */
function packFieldOf(err: unknown): PackField | null {
  const where = err instanceof ApiError ? (err.where ?? '') : '';
  if (where === 'source' || where === 'diff' || where === 'instruction') return where;
  return null;
}

function summaryOf(pack: RepositoryPack): string {
  const files = pack.vignettes.reduce((n, v) => n + v.coverage.files, 0);
  const total = pack.vignettes[0]?.coverage.totalFiles ?? 0;
  const ratio = pack.vignettes.length === 1 ? ` (${(pack.vignettes[0]!.coverage.ratio * 100).toFixed(1)}% of the characters)` : '';
  const vignettes = `${pack.vignettes.length} vignette${pack.vignettes.length === 1 ? '' : 's'}`;
  return `Packed ${pack.repository}: ${vignettes}, ${formatInt(files)} of ${formatInt(total)} files${ratio}, fitted to ${formatInt(pack.window)} tokens with ${formatInt(pack.answerTokens)} kept for the answer.`;
}

export function RepositorySource({ models, onPacked }: { models: readonly string[]; onPacked: (manifestPath: string) => void }) {
  const client = useClient();
  const [source, setSource] = useState('');
  const [diff, setDiff] = useState('');
  const [instruction, setInstruction] = useState('');
  const [packing, setPacking] = useState<string | null>(null);
  const [packed, setPacked] = useState<{ pack: RepositoryPack; models: string[] } | null>(null);
  const [errors, setErrors] = useState<Partial<Record<PackField, string>>>({});
  const [failure, setFailure] = useState<Error | null>(null);
  const packs = useRef(0);

  const pack = async () => {
    const packId = `pack-${Date.now().toString(36)}-${++packs.current}`;
    setPacking(packId);
    setErrors({});
    setFailure(null);
    try {
      const result = await client.call('packRepository', {
        source: source.trim(),
        models: [...models],
        packId,
        ...(diff.trim() === '' ? {} : { diff: diff.trim() }),
        ...(instruction.trim() === '' ? {} : { instruction }),
      });
      setPacked({ pack: result, models: [...models] });
      onPacked(result.manifestPath);
    } catch (err) {
      const field = packFieldOf(err);
      if (field) setErrors({ [field]: (err as Error).message });
      else setFailure(err as Error);
    } finally {
      setPacking(null);
    }
  };

  const stale = packed !== null && packed.models.join(',') !== models.join(',');
  return (
    <details className="field-set" data-testid="repository-source">
      <summary className="field-label">From a repository</summary>
      <Field
        label="Repository"
        name="repoSource"
        error={errors.source}
        hint="A folder, a .tar.gz, or a git folder (with a diff), on the engine's machine; over a server, in a folder it reads manifests from (serve --manifest-root)."
      >
        <input type="text" className="mono" placeholder="/path/to/repository" data-testid="repo-source" {...controlProps('repoSource', errors.source)} value={source} onChange={(e) => setSource(e.target.value)} />
      </Field>
      <div className="field-row">
        <Field label="Diff" name="repoDiff" error={errors.diff} hint="Optional, BASE..HEAD: only the changed files, with the unified diff.">
          <input type="text" className="mono" placeholder="main..feature" data-testid="repo-diff" {...controlProps('repoDiff', errors.diff)} value={diff} onChange={(e) => setDiff(e.target.value)} />
        </Field>
      </div>
      <Field label="Instruction" name="repoInstruction" error={errors.instruction} hint="Optional: what the models are asked, put before the files.">
        <textarea rows={3} dir="auto" data-testid="repo-instruction" {...controlProps('repoInstruction', errors.instruction)} value={instruction} onChange={(e) => setInstruction(e.target.value)} />
      </Field>
      <div className="row">
        <button type="button" className="button" data-testid="repo-pack" disabled={packing !== null || source.trim() === '' || models.length === 0} onClick={() => void pack()}>
          {packing !== null ? 'Packing…' : 'Pack into a manifest'}
        </button>
        {packing !== null ? (
          <button type="button" className="button" data-testid="repo-cancel" onClick={() => void client.call('cancelPack', { packId: packing })}>
            Cancel
          </button>
        ) : null}
        <span className="muted">
          {models.length === 0 ? 'Choose the models first: the pack is fitted to the smallest context window among them.' : `Fitted to the smallest window of ${models.join(', ')}.`}
        </span>
      </div>
      {packed ? (
        <div className="field-hint" data-testid="repo-pack-summary">
          {summaryOf(packed.pack)}
          {stale ? ` It was packed for ${packed.models.join(', ')}: pack again for the models chosen now.` : ''}
        </div>
      ) : null}
      <ErrorNotice error={failure} title="The repository was not packed" />
    </details>
  );
}
