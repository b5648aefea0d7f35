/**
 * The mock provider's judges (`mock-judge`, `mock-judge-2` in the embedded catalog): they read a
 * judge prompt and answer in the judge protocol's format, deterministically. In single mode the
 * verdict is whether the answer equals the reference, trimmed and case-folded as the `match` rule
 * compares (any non-empty answer passes when there is no reference); in pairwise mode the answer
 * that matches the reference wins (a tie when both or neither do; without a reference, the shorter
 * answer wins). A hash of (judge, prompt) flips a share `noise` of single verdicts and, in pairwise
 * mode, makes the judge pick position A that often: a position bias the order swap must catch. Two
 * judges with different names flip different verdicts, so they disagree now and then and their
 * agreement statistic is not trivially 1.
 * Runs on: Node (core).
 */
import { createHash } from 'node:crypto';
import { formatVerdict, readJudgePrompt } from '../judge-protocol.js';
import type { ModelRequest } from '../model-client.js';

const fold = (s: string) => s.trim().toLowerCase();

/** A uniform number in [0, 1) from the judge's name and the whole prompt. */
function draw(judge: string, request: ModelRequest): number {
  const h = createHash('sha256').update(judge);
  for (const m of request.messages) h.update('\u0000').update(m.role).update('\u0000').update(m.content);
  return h.digest().readUInt32BE(0) / 2 ** 32;
}

/** The judge's answer to a judge prompt; undefined when the request is no judge prompt. */
export function mockJudgeAnswer(judge: string, request: ModelRequest, noise: number): string | undefined {
  const prompt = readJudgePrompt(request.messages);
  if (!prompt) return undefined;
  const noisy = draw(judge, request) < noise;
  const ref = prompt.reference === undefined ? undefined : fold(prompt.reference);
  if (prompt.answers.length === 2) {
    const [a, b] = prompt.answers;
    if (noisy) return formatVerdict({ winner: 'A', reason: 'Answer A reads better.' });
    let winner: 'A' | 'B' | 'tie';
    if (ref !== undefined) {
      const aOk = fold(a) === ref;
      const bOk = fold(b) === ref;
      winner = aOk === bOk ? 'tie' : aOk ? 'A' : 'B';
    } else {
      winner = fold(a) === fold(b) || a.trim().length === b.trim().length ? 'tie' : a.trim().length < b.trim().length ? 'A' : 'B';
    }
    const reason = winner === 'tie' ? 'The answers are equally good.' : `Answer ${winner} agrees with the reference.`;
    return formatVerdict({ winner, reason: ref === undefined && winner !== 'tie' ? `Answer ${winner} is more concise.` : reason });
  }
  const answer = fold(prompt.answers[0]);
  const correct = ref === undefined ? answer !== '' : answer === ref;
  const pass = correct !== noisy;
  const reason =
    ref === undefined
      ? pass ? 'The answer addresses the question.' : 'The answer does not address the question.'
      : pass ? 'The answer agrees with the reference.' : 'The answer differs from the reference.';
  if (prompt.scale === 'pass_fail') return formatVerdict({ score: pass ? 'pass' : 'fail', reason });
  return formatVerdict({ score: pass ? prompt.scale.max : prompt.scale.min, reason });
}
