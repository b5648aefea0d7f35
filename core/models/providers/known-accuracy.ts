/**
 * Models with a known accuracy: the pure decision "does model m, at accuracy p, answer vignette v
 * at epoch e with exactly the target", and the wrong answer it gives otherwise. The decision is a
 * hash of (model, vignette id, epoch), so a sweep of `mock-strong` (p = 0.8) against `mock-weak`
 * (p = 0.6) is reproducible, every (model, vignette, epoch) is an independent Bernoulli(p) draw, and
 * the statistics of a report can be checked against the ground truth (the coverage simulation).
 * Runs on: Node (core); pure, no I/O.
 */

/** FNV-1a over a string's UTF-16 code units, continuing from `h`. */
function fnv1a(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * MurmurHash3's 32-bit finalizer: FNV-1a alone leaves neighbouring ids ("v1", "v2") with
 * correlated high bits; the finalizer spreads every input bit over the whole word, so the uniform
 * draw below is close to independent across vignettes, epochs and models.
 */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A uniform draw in [0, 1) from (model, vignette id, epoch, attempt, stream). Separators between
 * the fields keep ("ab", "c") and ("a", "bc") apart; `stream` gives independent draws for the
 * decision and for the choice of the wrong answer. Attempt 1 (the sweep's) hashes no attempt, so
 * its draws are those of a model asked once; a retry (attempt 2 and on) is a draw of its own.
 * 53 bits from two finalized words.
 */
function uniform(model: string, vignetteId: string, epoch: number, stream: number, attempt: number): number {
  let h = fnv1a(0x811c9dc5 ^ stream, model);
  h = fnv1a(Math.imul(h ^ 0x1f, 0x01000193), vignetteId);
  h = fnv1a(Math.imul(h ^ 0x1e, 0x01000193), String(epoch));
  if (attempt > 1) h = fnv1a(Math.imul(h ^ 0x1d, 0x01000193), String(attempt));
  const hi = fmix32(h);
  const lo = fmix32(hi ^ 0x9e3779b9 ^ stream);
  return (hi * 2 ** 21 + (lo >>> 11)) / 2 ** 53;
}

/**
 * Whether the model answers this vignette at this epoch with exactly the target. Over many
 * vignettes the share of hits is `accuracy` (a probability in [0, 1]).
 */
export function answersTarget(model: string, vignetteId: string, epoch: number, accuracy: number, attempt = 1): boolean {
  if (!(accuracy >= 0 && accuracy <= 1)) throw new RangeError(`accuracy must be in [0, 1], got ${accuracy}`);
  return uniform(model, vignetteId, epoch, 0, attempt) < accuracy;
}

/** Trimmed and lower-cased: a wrong text answer differs from the target so and does not contain it, so neither `match` (which reads the answer's end) nor `includes` takes it for the target. */
function fold(text: string): string {
  return text.trim().toLowerCase();
}

const OPTION_LETTERS = 'ABCDE';
const DISTRACTORS = [
  'I cannot determine that from the information given.',
  'None of the above.',
  'It depends on further details.',
  'Unknown.',
  'Something else entirely.',
];

/**
 * A deterministic wrong answer: different from the target once both are trimmed and case-folded.
 * A choice-style target (one letter, like "B") gets another option letter; a number gets another
 * number; any other text gets a distractor sentence that does not contain the target.
 */
export function wrongAnswer(target: string, model: string, vignetteId: string, epoch: number, attempt = 1): string {
  const pick = uniform(model, vignetteId, epoch, 1, attempt);
  const t = target.trim();
  if (/^[A-Za-z]$/.test(t)) {
    const upper = t.toUpperCase();
    // The options run at least A..E, and up to the target's own letter when it is later.
    const last = Math.max(OPTION_LETTERS.length - 1, upper.charCodeAt(0) - 65);
    const others: string[] = [];
    for (let c = 0; c <= last; c++) if (c !== upper.charCodeAt(0) - 65) others.push(String.fromCharCode(65 + c));
    const letter = others[Math.floor(pick * others.length)]!;
    return t === upper ? letter : letter.toLowerCase();
  }
  if (/^-?\d{1,15}$/.test(t)) {
    return String(Number(t) + 1 + Math.floor(pick * 9));
  }
  const folded = fold(target);
  const start = Math.floor(pick * DISTRACTORS.length);
  for (let i = 0; i < DISTRACTORS.length; i++) {
    const candidate = DISTRACTORS[(start + i) % DISTRACTORS.length]!;
    const f = fold(candidate);
    if (f !== folded && (folded === '' || !f.includes(folded))) return candidate;
  }
  // Every distractor contains the target (a target like "e"): any text other than it will do.
  return `${t} (not this)`;
}

/**
 * The answer of a model with known accuracy: the target itself on a hit, else a wrong answer.
 * `accuracy` is the share of hits, in [0, 1]; `attempt` is the try at this sample (1: the sweep's).
 */
export function knownAccuracyAnswer(
  model: string,
  vignetteId: string,
  epoch: number,
  target: string,
  accuracy: number,
  attempt = 1,
): string {
  return answersTarget(model, vignetteId, epoch, accuracy, attempt) ? target : wrongAnswer(target, model, vignetteId, epoch, attempt);
}
