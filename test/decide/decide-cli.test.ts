/**
 * `panoptes plan` and `panoptes decide` as child processes: the plan from a pilot run and from
 * guesses (text and --json); and the decision of a run killed with SIGKILL mid-sweep and resumed is
 * the decision of the same sweep run without a break — it is a function of the stored records.
 * The kill falls at a seeded point (PANOPTES_TEST_SEED draws another; a failure says its seed).
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli, waitForStderr } from '../helpers/cli.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { tempDir, writeMockCatalog, writeTargetManifest } from '../helpers/temp.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('plan and decide (the command line)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let common: string[];
  let manifest: string;
  let scorers: string;
  beforeAll(() => {
    tmp = tempDir();
    const catalog = writeMockCatalog(tmp.dir, { sharp: { accuracy: 0.9, latencyMs: 6, jitterMs: 4 }, dull: { accuracy: 0.5, latencyMs: 6, jitterMs: 4 } });
    common = ['--data-dir', join(tmp.dir, 'data'), '--catalog', catalog];
    manifest = writeTargetManifest(tmp.dir, 200);
    scorers = join(tmp.dir, 'scorers.json');
    writeFileSync(scorers, JSON.stringify({ scorers: [{ name: 'exact', type: 'match' }] }));
  });
  afterAll(() => tmp.cleanup());

  const sweep = ['run', '--manifest', '', '--models', 'sharp,dull', '--epochs', '2', '--call-concurrency', '2', '--skip-prompt-cache', '--no-progress'];

  it('a run killed with SIGKILL and resumed decides as one run through', async () => {
    const args = () => sweep.map((a) => (a === '' ? manifest : a));
    const whole = await runCli([...args(), '--scorers', scorers, '--json', ...common]);
    expect(whole.code, whole.stderr).toBe(0);
    const wholeId = (JSON.parse(whole.stdout) as { run_id: string }).run_id;

    const broken = startCli([...args(), '--scorers', scorers, ...common]);
    const [, brokenId] = await waitForStderr(broken, /run (r\w+): 4 jobs/);
    // Killed at a seeded point of the sweep's first seconds (800 calls, two at a time).
    await sleep(seededRandom('decide: kill mid-sweep').between(200, 600));
    broken.child.kill('SIGKILL');
    expect((await broken.done).signal).toBe('SIGKILL');
    const resumed = await runCli(['resume', brokenId!, ...common]);
    expect(resumed.code, resumed.stderr).toBe(0);

    const decide = async (id: string) => {
      const res = await runCli(['decide', id, '--json', '--seed', '7', ...common]);
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout) as { run_id: string; pairs: unknown[]; calls: number; calls_full: number };
    };
    const a = await decide(wholeId);
    const b = await decide(brokenId!);
    expect(b.pairs).toEqual(a.pairs);
    expect(b.calls).toBe(a.calls);
    expect(a.pairs[0]).toMatchObject({ status: 'decided', winner: 'sharp' });
    expect(a.calls / a.calls_full).toBeLessThanOrEqual(0.4);

    const text = await runCli(['decide', wholeId, '--seed', '7', ...common]);
    expect(text.stdout).toMatch(/^sharp\s+dull\s+sharp better\s+\d+\s+\[/m);
    expect(text.stdout).toMatch(/^stopping there takes \d+ of the full sweep's 800 calls \(\d+ %\)$/m);

    // The same run as a pilot for a plan.
    const plan = await runCli(['plan', '--from', wholeId, '--delta', '0.1', ...common]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/^plan: detect a difference of 0\.1 with power 0\.8 at alpha 0\.05$/m);
    expect(plan.stdout).toContain(`from pilot run ${wholeId} (scorer exact, 2 epochs, 200 vignettes)`);
    expect(plan.stdout).toMatch(/^epochs\s+vignettes\s+formula\s+calls\s+judge calls\s+tokens\s+cost\s+wall time$/m);
    expect(plan.stdout).toMatch(/← cheapest that reaches the power/);
    expect(plan.stdout).toMatch(/^smallest difference the manifest's 200 vignettes detect \(power 0\.8\): 1 epoch: 0\.\d{3}, 2 epochs/m);
  }, 180_000);

  it('plans from guesses, says when the manifest is too small, and refuses bad numbers', async () => {
    const json = await runCli(['plan', '--models', 'sharp,dull', '--accuracy', '0.8,0.7', '--flip-rate', '0.1', '--delta', '0.02', '--manifest', manifest, '--json', ...common]);
    expect(json.code, json.stderr).toBe(0);
    const plan = JSON.parse(json.stdout) as { too_small: boolean; manifest_vignettes: number; designs: { epochs: number; feasible: boolean }[] };
    expect(plan).toMatchObject({ too_small: true, manifest_vignettes: 200 });
    expect(plan.designs.map((d) => d.epochs)).toEqual([1, 2, 3, 5]);
    const text = await runCli(['plan', '--models', 'sharp,dull', '--accuracy', '0.8,0.7', '--delta', '0.02', '--manifest', manifest, ...common]);
    expect(text.stdout).toMatch(/^note: the manifest is too small to detect 0\.02 at all: 200 vignettes/m);
    const bad = await runCli(['plan', '--models', 'sharp,dull', '--accuracy', '0.8,x', '--delta', '0.1', ...common]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--accuracy must be a number, got "x"');
  }, 60_000);
});
