/**
 * The suite cannot hang: a test that blocks its worker (its own timeout can never fire) is named
 * by the watchdog reporter and the run ends as failed, in about the test's timeout plus the grace,
 * instead of running until CI's limit.
 * Runs on: Node (tests).
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';

it('names a test that blocks its worker and fails the run', async () => {
  const vitest = resolve('node_modules/vitest/vitest.mjs');
  const child = spawn(process.execPath, [vitest, 'run', '--config', 'test/architecture/watchdog/vitest.config.ts'], {
    env: { ...process.env, PANOPTES_TEST_WATCHDOG_GRACE_MS: '2000' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  // The bound on this test: should the watchdog fail, its whole process group is killed.
  const kill = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 90_000);
  const code = await new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
  clearTimeout(kill);
  // The blocked fork outlives vitest's process: end the group it was started in.
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
  expect(out).toMatch(/watchdog: test\/architecture\/watchdog\/blocks-its-worker\.fixture\.ts: "spins for ever" went 2 s past its timeout/);
  expect(code).toBe(1);
}, 120_000);
