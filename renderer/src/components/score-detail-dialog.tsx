/**
 * One vignette's responses side by side (models down, epochs across), each answer's words that
 * differ from a chosen one marked (diff-reference.tsx), each with every score it got:
 * scorer, value, pass or fail, hard or soft, the judge and its rationale; under it, the retries a
 * scorer made after a hard fail, each with its answer and verdicts; a staged record's calls, each
 * with its prompt and answer, collapsed (stage-calls.tsx). A modal
 * dialog: focus moves into it when it opens, Escape closes it, and focus goes back to the matrix
 * cell that opened it.
 * Runs on: renderer.
 */
import { useEffect, useRef } from 'react';
import { useClient } from '../api/client-context.js';
import type { ScoreDetail } from '../api/types.js';
import { AnswerDiff } from './answer-diff.js';
import { AnswerText } from './answer-text.js';
import { useDiffReference } from './diff-reference.js';
import { ErrorNotice } from './notice.js';
import { PromptBox } from './prompt-box.js';
import { formatScore } from '../../../core/common/score-format.js';
import { sideBySide } from '../../../core/common/side-by-side.js';
import { StageCalls } from './stage-calls.js';
import { useFetch } from './use-fetch.js';

type DetailResponse = ScoreDetail['responses'][number];
type DetailScore = DetailResponse['scores'][number];
type DetailRetry = DetailResponse['retries'][number];

function ScoreLine({ score }: { score: DetailScore }) {
  const verdict = score.passed === null ? null : score.passed ? 'pass' : 'fail';
  return (
    <li className="score-line" data-scorer={score.scorer}>
      <span className="score-name">{score.scorer}</span>{' '}
      <span className="mono" data-col="value">{formatScore(score.value)}</span>{' '}
      {verdict ? <span className={`badge ${verdict === 'pass' ? 'badge-ok' : score.severity === 'soft' ? 'badge-warn' : 'badge-err'}`}>{verdict}{verdict === 'fail' && score.severity !== 'none' ? ` · ${score.severity}` : ''}</span> : null}
      {score.judge ? <span className="muted small"> judge {score.judge}</span> : null}
      {score.explanation ? (
        <div className="score-explanation small" dir="auto">
          {score.explanation}
        </div>
      ) : null}
    </li>
  );
}

function RetryBlock({ retry }: { retry: DetailRetry }) {
  return (
    <div className="sbs-retry" data-attempt={retry.attempt}>
      <div className="muted small">
        retry: attempt {retry.attempt} for {retry.scorer}
      </div>
      <AnswerText text={retry.response} />
      {retry.scores.length > 0 ? (
        <ul className="score-list">
          {retry.scores.map((s, i) => (
            <ScoreLine key={`${s.judge ?? ''}:${i}`} score={s} />
          ))}
        </ul>
      ) : (
        <div className="muted small">could not be scored</div>
      )}
    </div>
  );
}

/** `against`: the answer this one's differences are highlighted against (null: shown plain). */
function ResponseCell({ responses, against }: { responses: readonly DetailResponse[]; against: string | null }) {
  if (responses.length === 0) return <span className="muted">—</span>;
  return (
    <>
      {responses.map((r) => (
        <div key={r.seq} className="sbs-response">
          <AnswerDiff text={r.response} against={against} />
          <StageCalls stages={r.stages} />
          {r.scores.length > 0 ? (
            <ul className="score-list">
              {r.scores.map((s, i) => (
                <ScoreLine key={`${s.scorer}:${s.version}:${s.judge ?? ''}:${i}`} score={s} />
              ))}
            </ul>
          ) : (
            <div className="muted small">not scored yet</div>
          )}
          {r.retries.map((retry) => (
            <RetryBlock key={`${retry.version}:${retry.attempt}`} retry={retry} />
          ))}
        </div>
      ))}
    </>
  );
}

export function ScoreDetailDialog({ runId, vignetteId, onClose }: { runId: string; vignetteId: string; onClose: () => void }) {
  const client = useClient();
  const dialog = useRef<HTMLDialogElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const detail = useFetch(() => client.call('scoreDetail', { runId, vignetteId }), [client, runId, vignetteId]);

  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    dialog.current?.showModal();
    heading.current?.focus();
    return () => opener?.focus();
  }, []);

  const data = detail.data;
  const { models, epochs, cell } = sideBySide(data?.responses ?? []);
  const firstModel = models.find((m) => epochs.length > 0 && cell(m, epochs[0]!).length > 0);
  const diff = useDiffReference(data?.responses ?? [], firstModel === undefined ? null : { model: firstModel, epoch: epochs[0]! });

  return (
    <dialog
      ref={dialog}
      className="score-dialog side-by-side"
      data-testid="score-detail"
      aria-labelledby="score-detail-title"
      onClose={onClose}
    >
      <header className="card-header">
        <h2 id="score-detail-title" ref={heading} tabIndex={-1}>
          <span className="mono" dir="auto">
            {vignetteId}
          </span>{' '}
          — responses and scores
        </h2>
        <button type="button" className="button small" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </header>
      <ErrorNotice error={detail.error} title="Could not load the responses" />
      {data ? (
        <>
          <PromptBox vignette={data.vignette} />
          {diff.picker}
          <div className="sbs-scroll">
            <table className="table sbs-table">
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  {epochs.map((e) => (
                    <th key={e} scope="col">
                      Epoch {e}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {models.map((model) => (
                  <tr key={model} data-model={model}>
                    <th scope="row" className="nowrap">
                      {model}
                    </th>
                    {epochs.map((e) => (
                      <td key={e} className={`sbs-cell${diff.isReference(model, e) ? ' sbs-reference' : ''}`} data-epoch={e}>
                        <ResponseCell responses={cell(model, e)} against={diff.isReference(model, e) ? null : diff.referenceText} />
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : detail.loading ? (
        <p className="muted">Loading…</p>
      ) : null}
    </dialog>
  );
}
