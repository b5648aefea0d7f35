/**
 * Compare runs' changed verdicts: for one pass/fail scorer, per model, the vignettes that passed in
 * run A and fail in run B, and back (a vignette's verdict is its epochs' majority). A vignette
 * opens both runs' answers for that model side by side, run B's differences from run A's marked
 * word by word.
 * Runs on: renderer.
 */
import { useEffect, useRef, useState } from 'react';
import { useClient } from '../api/client-context.js';
import type { ModelFlips } from '../api/types.js';
import { formatInt } from '../format.js';
import { AnswerDiff } from './answer-diff.js';
import { ErrorNotice } from './notice.js';
import { useFetch } from './use-fetch.js';

interface Opened {
  model: string;
  vignetteId: string;
}

function BothAnswers({ runA, runB, opened, onClose }: { runA: string; runB: string; opened: Opened; onClose: () => void }) {
  const client = useClient();
  const panel = useRef<HTMLDivElement>(null);
  useEffect(() => panel.current?.focus(), [opened]);
  const fetched = useFetch(
    () =>
      Promise.all(
        [runA, runB].map((runId) => client.call('responses', { runId, vignetteId: opened.vignetteId, model: opened.model, limit: 100 })),
      ),
    [client, runA, runB, opened.vignetteId, opened.model],
  );
  const [a, b] = fetched.data ?? [];
  const first = a?.items[0]?.response ?? null;
  return (
    <div className="card" data-testid="flip-answers" ref={panel} tabIndex={-1} role="region" aria-label={`${opened.vignetteId}, ${opened.model}, in both runs`} onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <header className="card-header">
        <h3 className="h3">
          <span className="mono" dir="auto">{opened.vignetteId}</span> · {opened.model}
        </h3>
        <button type="button" className="button small" onClick={onClose}>
          Close
        </button>
      </header>
      <ErrorNotice error={fetched.error} />
      <div className="results-pair">
        {[
          { label: 'Run A', page: a, against: null },
          { label: 'Run B (differences from run A marked)', page: b, against: first },
        ].map((side) => (
          <div key={side.label}>
            <h4 className="h3">{side.label}</h4>
            {(side.page?.items ?? []).map((r) => (
              <div key={r.seq} className="sbs-cell">
                <div className="muted small">epoch {r.epoch}</div>
                <AnswerDiff text={r.response} against={side.against} />
              </div>
            ))}
          </div>
        ))}
      </div>
    </div>
  );
}

function FlipList({ ids, count, kind, onOpen }: { ids: readonly string[]; count: number; kind: 'fail' | 'pass'; onOpen: (id: string) => void }) {
  if (count === 0) return <span className="muted">none</span>;
  return (
    <>
      <ul className="flip-list">
        {ids.map((id) => (
          <li key={id}>
            <button type="button" className={`flip-link mono flip-${kind}`} dir="auto" onClick={() => onOpen(id)}>
              {id}
            </button>
          </li>
        ))}
      </ul>
      {count > ids.length ? <p className="muted small">and {formatInt(count - ids.length)} more</p> : null}
    </>
  );
}

export function FlippedVignettes({ runA, runB, scorer }: { runA: string; runB: string; scorer: string }) {
  const client = useClient();
  const flips = useFetch(() => client.call('flippedVignettes', { runA, runB, scorer }), [client, runA, runB, scorer]);
  const [opened, setOpened] = useState<Opened | null>(null);
  const models: ModelFlips[] = flips.data?.models ?? [];
  return (
    <div className="card" data-testid="compare-flips">
      <header className="card-header">
        <h2>Vignettes that changed</h2>
        <span className="muted small">each model's verdict (its epochs' majority) in run A, then in run B</span>
      </header>
      {flips.error ? <p className="muted">{flips.error.message}</p> : null}
      {models.length === 0 && flips.data ? <p className="muted">No model ran in both runs.</p> : null}
      {models.map((m) => (
        <section key={m.model} data-model={m.model} className="pad">
          <h3 className="h3">
            {m.model}{' '}
            <span className="muted small">
              {formatInt(m.passToFailCount)} pass → fail, {formatInt(m.failToPassCount)} fail → pass, of {formatInt(m.compared)} compared
            </span>
          </h3>
          <div className="results-pair">
            <div data-testid="pass-to-fail">
              <h4 className="small">Pass → fail</h4>
              <FlipList ids={m.passToFail} count={m.passToFailCount} kind="fail" onOpen={(vignetteId) => setOpened({ model: m.model, vignetteId })} />
            </div>
            <div data-testid="fail-to-pass">
              <h4 className="small">Fail → pass</h4>
              <FlipList ids={m.failToPass} count={m.failToPassCount} kind="pass" onOpen={(vignetteId) => setOpened({ model: m.model, vignetteId })} />
            </div>
          </div>
        </section>
      ))}
      {opened ? <BothAnswers runA={runA} runB={runB} opened={opened} onClose={() => setOpened(null)} /> : null}
    </div>
  );
}
