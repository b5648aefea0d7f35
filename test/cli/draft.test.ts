/**
 * `panoptes draft RUN_ID` (a real child process): Run again's draft of a run with scorers, a
 * staged template of its own, a built-in one, and reasoning settings, printed as the createRun JSON
 * the contract's `runDraft` gives, template and reasoning included; and with `--command DIR` the
 * `panoptes run` command that, run as printed by a shell, makes a run with the same options,
 * template and scorers. An unknown run is refused naming it.
 * Runs on: Node (tests).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run } from '../../core/domain.js';
import type { CreateRunInput } from '../../core/service/contract.js';
import { openEngine } from '../../core/service/engine.js';
import { BIN, runCli } from '../helpers/cli.js';
import { tempDir, writeTargetManifest } from '../helpers/temp.js';

const TEMPLATE = `name: plan-then-answer
stages:
  - name: plan
    prompt: "Plan how to answer: {{vignette.prompt}}"
  - name: answer
    prompt: "Using the plan {{stages.plan}}, answer: {{vignette.prompt}}"
`;
const SCORERS = { scorers: [{ name: 'exact', type: 'match' as const }, { name: 'terse', type: 'words' as const, max: 40, severity: 'soft' as const }] };

describe('panoptes draft', () => {
  let tmp: ReturnType<typeof tempDir>;
  let dataDir: string;
  let own: Run;
  let builtin: Run;
  let expected: CreateRunInput;

  beforeAll(async () => {
    tmp = tempDir();
    dataDir = join(tmp.dir, 'data');
    const engine = openEngine({ dataDir });
    const manifestPath = writeTargetManifest(tmp.dir, 3);
    own = await engine.service.createRun({
      manifestPath,
      models: ['mock-scripted'],
      epochs: 1,
      name: "Mira's plan run",
      template: TEMPLATE,
      sampling: { temperature: 0.5, seed: 7, reasoningEffort: 'low', thinkingBudget: 2048 },
      skipPromptCache: true,
      scorers: SCORERS,
    });
    builtin = await engine.service.createRun({ manifestPath, models: ['mock-scripted'], epochs: 2, template: 'repo_audit' });
    expected = await engine.service.runDraft({ runId: own.id });
    await engine.close();
  });
  afterAll(() => tmp.cleanup());

  it('prints the draft as JSON, with the template and the reasoning settings', async () => {
    const res = await runCli(['draft', own.id, '--data-dir', dataDir]);
    expect(res.code, res.stderr).toBe(0);
    const draft = JSON.parse(res.stdout) as CreateRunInput;
    expect(draft).toEqual(expected);
    expect(draft.sampling).toEqual({ temperature: 0.5, seed: 7, reasoningEffort: 'low', thinkingBudget: 2048 });
    expect(JSON.parse(draft.template!)).toEqual(own.options.template);
    expect(draft.scorers!.scorers.map((s) => s.name)).toEqual(['exact', 'terse']);
    // A built-in template stays its name, as New run's Template field shows it.
    const other = JSON.parse((await runCli(['draft', builtin.id, '--data-dir', dataDir])).stdout) as CreateRunInput;
    expect(other).toMatchObject({ template: 'repo_audit', epochs: 2 });
  });

  it('prints the panoptes run command that creates the same run again', async () => {
    const dir = join(tmp.dir, 'again');
    const res = await runCli(['draft', own.id, '--command', dir, '--data-dir', dataDir]);
    expect(res.code, res.stderr).toBe(0);
    const line = res.stdout.trim();
    expect(line).toMatch(/^panoptes run --manifest \S+ --models mock-scripted --epochs 1 /);
    expect(line).toContain(`--scorers ${join(dir, `${own.id}-scorers.json`)}`);
    expect(line).toContain(`--template ${join(dir, `${own.id}-template.json`)}`);
    expect(line).toContain("--name 'Mira'\\''s plan run'");

    // Run as a shell reads it, with this checkout's panoptes: a new run, made as the draft says.
    const shell = line.replace(/^panoptes /, `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} `) + ` --json --no-progress --data-dir ${JSON.stringify(dataDir)}`;
    const ran = await promisify(execFile)('/bin/sh', ['-c', shell], { env: { ...process.env, PANOPTES_LOG: 'warn' }, timeout: 120_000 });
    const engine = openEngine({ dataDir, readonly: true });
    try {
      const [again] = engine.store.queries.listRuns({ limit: 1 });
      expect(again!.id).not.toBe(own.id);
      expect(ran.stdout).toContain(again!.id);
      expect(again!.options).toEqual(own.options);
      expect(again!.name).toBe(own.name);
      const defs = (id: string) =>
        engine.store.db.prepare(`SELECT s.name, s.version FROM run_scorers rs JOIN scorers s ON s.id = rs.scorer_id WHERE rs.run_id = ? ORDER BY rs.position`).all(id);
      expect(defs(again!.id)).toEqual(defs(own.id));
    } finally {
      await engine.close();
    }
    // A built-in needs no file.
    const other = await runCli(['draft', builtin.id, '--command', join(tmp.dir, 'none'), '--data-dir', dataDir]);
    expect(other.stdout.trim()).toMatch(/ --template repo_audit( |$)/);
  }, 150_000);

  it('refuses an unknown run, naming it', async () => {
    const res = await runCli(['draft', 'rnope', '--data-dir', dataDir]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('rnope');
    expect(res.stdout).toBe('');
  });
});
