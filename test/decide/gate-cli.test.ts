/**
 * `panoptes gate` as a child process: the GitHub Actions workflow of docs/guide/ci.md, its `run:`
 * steps executed as written (both checkouts being this repository, Panoptes already built, so the
 * install step is skipped), passes and writes the comment; a worse head exits 1 with its Markdown;
 * runs of different manifests exit 2 saying so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeMockCatalog, writeTargetManifest } from '../helpers/temp.js';

interface Step {
  id?: string;
  name?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
}
interface Workflow {
  jobs: Record<string, { env: Record<string, string>; steps: Step[] }>;
}

/** The workflow block of the CI guide. */
function workflowOfGuide(): Workflow {
  const text = readFileSync(resolve('docs/guide/ci.md'), 'utf8');
  const block = /```yaml\n([\s\S]*?)```/.exec(text);
  if (!block) throw new Error('docs/guide/ci.md has no yaml block');
  return parse(block[1]!) as Workflow;
}

/** `${{ github.workspace }}` and `${{ steps.X.outputs.Y }}`: the only expressions the run steps' env use. */
function evaluate(text: string, workspace: string, outputs: Record<string, Record<string, string>>): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    if (expr === 'github.workspace') return workspace;
    const m = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
    if (m) return outputs[m[1]!]?.[m[2]!] ?? '';
    throw new Error(`the test cannot evaluate \${{ ${expr} }}`);
  });
}

describe('panoptes gate (the command line)', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(() => {
    tmp = tempDir();
  });
  afterAll(() => tmp.cleanup());

  it("runs the CI guide's workflow as written: base and head with the embedded mocks, the gate passes, the comment is written", () => {
    const workspace = join(tmp.dir, 'workspace');
    spawnSync('mkdir', ['-p', workspace]);
    symlinkSync(resolve('.'), join(workspace, 'head'));
    symlinkSync(resolve('.'), join(workspace, 'base'));
    const job = Object.values(workflowOfGuide().jobs)[0]!;
    const outputs: Record<string, Record<string, string>> = {};
    const env = Object.fromEntries(Object.entries(job.env).map(([k, v]) => [k, evaluate(v, workspace, outputs)]));
    const ran: string[] = [];
    let last = -1;
    for (const [i, step] of job.steps.entries()) {
      if (step.run === undefined || step.id === 'install') continue;
      const outFile = join(tmp.dir, `output-${i}`);
      writeFileSync(outFile, '');
      const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, evaluate(v, workspace, outputs)]));
      // GitHub's default shell for `run:`: bash -e.
      const res = spawnSync('bash', ['-e', '-c', step.run], {
        cwd: workspace,
        env: { ...process.env, PANOPTES_LOG: 'warn', ...env, ...stepEnv, GITHUB_OUTPUT: outFile },
        encoding: 'utf8',
        timeout: 120_000,
      });
      last = res.status ?? -1;
      ran.push(`${step.name ?? step.id}: ${last}`);
      if (step.id) outputs[step.id] = Object.fromEntries(readFileSync(outFile, 'utf8').split('\n').filter(Boolean).map((l) => l.split('=', 2) as [string, string]));
      expect(last, `${step.name}: ${res.stderr}`).toBe(0);
    }
    expect(ran).toEqual(['Run the base: 0', 'Run the head: 0', 'Gate: 0', 'Fail when the head is worse or the runs cannot be compared: 0']);
    expect(outputs.base!.run).toMatch(/^r\w+$/);
    expect(outputs.head!.run).not.toBe(outputs.base!.run);
    expect(outputs.gate).toEqual({ status: '0' });
    const md = readFileSync(join(workspace, 'gate.md'), 'utf8');
    expect(md).toMatch(/^## ✅ Panoptes gate: head is not significantly worse than base \(6 scorer × model lines\)\n/);
    expect(md).toContain('### mock-strong');
    expect(md).toContain('### mock-weak');
    // Identical runs differ by exactly 0 on every vignette: no interval (never a point), and no change.
    expect(md).toMatch(/\| exact \| 0\.\d{3} \| 0\.\d{3} \| ±0\.000 \(no interval\) \| no significant change \|/);
    // The comment step reads the file the gate wrote.
    const comment = job.steps.find((s) => s.uses?.startsWith('marocchino/sticky-pull-request-comment'));
    expect((comment as { with?: { path?: string } }).with?.path).toBe('gate.md');
  }, 240_000);

  it('exits 1 for a worse head, 2 for runs of different manifests', async () => {
    const dataDir = join(tmp.dir, 'data');
    const manifest = writeTargetManifest(tmp.dir, 80);
    const shorter = writeTargetManifest(tmp.dir, 60, 'shorter.jsonl');
    const scorers = join(tmp.dir, 'scorers.json');
    writeFileSync(scorers, JSON.stringify({ scorers: [{ name: 'exact', type: 'match' }] }));
    const before = writeMockCatalog(tmp.dir, { cand: { accuracy: 0.9 } }, 'before.json');
    const after = writeMockCatalog(tmp.dir, { cand: { accuracy: 0.4 } }, 'after.json');
    const run = async (catalog: string, file = manifest) => {
      const res = await runCli(['run', '--manifest', file, '--models', 'cand', '--scorers', scorers, '--skip-prompt-cache', '--json', '--no-progress', '--data-dir', dataDir, '--catalog', catalog]);
      expect(res.code, res.stderr).toBe(0);
      return (JSON.parse(res.stdout) as { run_id: string }).run_id;
    };
    const base = await run(before);
    const head = await run(after);
    const md = join(tmp.dir, 'worse.md');
    const worse = await runCli(['gate', '--base', base, '--head', head, '--markdown', md, '--data-dir', dataDir]);
    expect(worse.code, worse.stderr).toBe(1);
    expect(worse.stdout).toMatch(/^gate: head is worse: 1 of 1 scorer × model lines are significantly worse$/m);
    expect(worse.stdout).toMatch(/^cand\s+exact\s+80\s+0\.\d{3}\s+0\.\d{3}\s+-0\.\d{3} \[-0\.\d{3}, -0\.\d{3}\]\s+worse\s+\d+$/m);
    const text = readFileSync(md, 'utf8');
    expect(text).toMatch(/^## ❌ Panoptes gate/);
    expect(text).toMatch(/Went from pass to fail:\n\n- exact \(\d+\): q\d+, q\d+/);

    const json = await runCli(['gate', '--base', base, '--head', head, '--json', '--margin', '0.9', '--data-dir', dataDir]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ decision: 'pass', margin: 0.9, base, head });

    const other = await run(before, shorter);
    const incomparable = await runCli(['gate', '--base', base, '--head', other, '--markdown', join(tmp.dir, 'x.md'), '--data-dir', dataDir]);
    expect(incomparable.code).toBe(2);
    expect(incomparable.stdout).toContain('different manifests: 20 vignettes only in base (q60, q61, q62, q63, q64, … (20 in all))');
    expect(existsSync(join(tmp.dir, 'x.md'))).toBe(true);

    const bad = await runCli(['gate', '--base', base, '--head', head, '--margin', 'lots', '--data-dir', dataDir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--margin must be a number from 0 to 1, got "lots"');
    // A gate that could not run is never "worse" (1 fails the change in CI): a comment file it cannot write, an unknown run.
    const unwritable = await runCli(['gate', '--base', base, '--head', head, '--markdown', tmp.dir, '--data-dir', dataDir]);
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toContain(`--markdown ${tmp.dir}: cannot write it (EISDIR)`);
    const unknown = await runCli(['gate', '--base', base, '--head', 'r-nope', '--data-dir', dataDir]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('r-nope');
  }, 120_000);
});
