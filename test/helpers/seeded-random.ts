/**
 * Random timings a failing test can replay: a small seeded generator (mulberry32) whose seed is
 * fixed per test unless `PANOPTES_TEST_SEED` gives another, so the kill points of one run are the
 * kill points of the next. Made inside a test, it adds its seed to every error of that test when
 * it fails, with the command that draws the same points again:
 * `PANOPTES_TEST_SEED=<seed> npx vitest run <file>`. Every random draw in the tests (kill points,
 * pauses, fuzzed frames) comes from one of these.
 * Runs on: Node (tests).
 */
import { relative } from 'node:path';
import { onTestFailed } from 'vitest';

export interface SeededRandom {
  readonly seed: number;
  /** A draw from [0, 1). */
  next(): number;
  /** A draw from [low, high). */
  between(low: number, high: number): number;
  /** One of `items`. */
  pick<T>(items: readonly T[]): T;
}

/**
 * A generator for the test named `label` (its default seed is derived from the label). Call it
 * inside a test (vitest refuses `onTestFailed` elsewhere): the seed is then said on failure.
 */
export function seededRandom(label: string): SeededRandom {
  const fromEnv = process.env.PANOPTES_TEST_SEED;
  const seed = fromEnv !== undefined && /^\d+$/.test(fromEnv) ? Number(fromEnv) >>> 0 : hash(label);
  onTestFailed(({ task }) => {
    const replay = `(${label}: seed ${seed}; replay with PANOPTES_TEST_SEED=${seed} npx vitest run ${relative(process.cwd(), task.file.filepath)})`;
    for (const error of task.result?.errors ?? []) error.message = `${error.message}\n${replay}`;
  });
  let state = seed;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    between: (low, high) => low + (high - low) * next(),
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error('seededRandom.pick: no items to pick from');
      return items[Math.floor(next() * items.length)]!;
    },
  };
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}
