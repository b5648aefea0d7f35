/**
 * A test that draws from a seeded generator and fails says its seed and the command that draws the
 * same again (a real vitest run of a failing fixture), and `PANOPTES_TEST_SEED` replays that
 * seed's draws.
 * Runs on: Node (tests).
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { seededRandom } from '../helpers/seeded-random.js';

/** The fixture's vitest run: its exit code and everything it printed (bounded). */
function runFixture(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const vitest = resolve('node_modules/vitest/vitest.mjs');
  return new Promise((done) => {
    execFile(
      process.execPath,
      [vitest, 'run', '--config', 'test/architecture/seeded-random/vitest.config.ts'],
      { env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 60_000, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? null) : 0, out: stdout + stderr }),
    );
  });
}

it('a failing test names its seed and the command to replay it', async () => {
  const { code, out } = await runFixture({ PANOPTES_TEST_SEED: '' });
  expect(code, out).toBe(1);
  const seed = /a draw that fails: seed (\d+); replay with PANOPTES_TEST_SEED=(\d+) npx vitest run test\/architecture\/seeded-random\/fails-after-a-draw\.fixture\.ts/.exec(out);
  expect(seed, out).not.toBeNull();
  expect(seed![1]).toBe(seed![2]);
}, 120_000);

it('PANOPTES_TEST_SEED replays a seed: the same seed draws the same, another draws otherwise', () => {
  const given = process.env.PANOPTES_TEST_SEED;
  const draws = (seed: string) => {
    process.env.PANOPTES_TEST_SEED = seed;
    const random = seededRandom('replayed');
    return { seed: random.seed, draws: Array.from({ length: 8 }, () => random.next()) };
  };
  try {
    const first = draws('12345');
    expect(first.seed).toBe(12345);
    expect(draws('12345')).toEqual(first);
    expect(draws('54321').draws).not.toEqual(first.draws);
    for (const d of first.draws) expect(d >= 0 && d < 1).toBe(true);
  } finally {
    if (given === undefined) delete process.env.PANOPTES_TEST_SEED;
    else process.env.PANOPTES_TEST_SEED = given;
  }
});
