/**
 * A staged template's judge-loop calls after kill -9: every call the judge's provider was asked is
 * in the run's judge usage. Local OpenAI-compatible servers (real child processes, counting every
 * request they receive) answer the candidate and the judge; a `panoptes run` of a judged template
 * is SIGKILLed at seeded counts of judge calls, mid-template (PANOPTES_TEST_SEED replays them),
 * resumed, killed again, and resumed to the end. A judge call is counted before it is made, so the stored calls
 * equal the requests the judge's server received, but for a call counted at a kill whose request
 * had not left yet: at most one a call permit (the call concurrency) per kill, never fewer. Only
 * the tokens of the calls in flight at a kill are unknown.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { openEngine } from '../../core/service/engine.js';
import { initTelemetry } from '../../core/telemetry.js';
import { runCli } from '../helpers/cli.js';
import { killAtSeededPoint, readCount, useCountedProviders, writeQuestions } from '../helpers/kill-at-seeded-point.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { refereedTemplate } from './refereed-template.js';

initTelemetry({ defaultLevel: 'silent' });

const providers = useCountedProviders();

const KILLS = 3;
const VIGNETTES = 200;
/** Vignettes posed at once; each holds its permit through its judge loop, so at most this many judge calls are in flight. */
const CALLS_IN_FLIGHT = 4;

/**
 * The judge's server echoes its prompt, whose verdict format it passes: one answer and one judge
 * call a vignette, the judge asked after the answer is stored (a kill between them cuts the chain).
 */
const TEMPLATE = refereedTemplate('fj');

it("a judged template SIGKILLed mid-template at seeded points, then resumed: the stored judge calls equal what the judge's provider was asked", async () => {
  const random = seededRandom('template-judge: run');
  const dataDir = join(providers.dir, 'data');
  const dbPath = join(dataDir, 'panoptes.db');
  const manifest = writeQuestions(join(providers.dir, 'manifest.jsonl'), VIGNETTES);
  const templateFile = join(providers.dir, 'refereed.yaml');
  writeFileSync(templateFile, TEMPLATE);
  const run = ['run', '--manifest', manifest, '--models', 'cand', '--template', templateFile, '--call-concurrency', String(CALLS_IN_FLIGHT),
    '--skip-prompt-cache', '--no-progress', '--data-dir', dataDir, '--catalog', providers.catalog()];
  // The call bound is the process's: each resume is given it again.
  const resume = ['resume', '--call-concurrency', String(CALLS_IN_FLIGHT), '--data-dir', dataDir, '--catalog', providers.catalog()];
  // Each kill falls at a seeded count of judge calls (the run's, over every process before it): a
  // point inside the run however fast or loaded the machine, the records half landed.
  const judgeCalls = () => readCount(dbPath, `SELECT SUM(calls) AS n FROM judge_usage`);
  let killed = 0;
  let midTemplate = 0;
  for (let k = 0; k < KILLS; k++) {
    const at = 20 + k * 55 + random.between(0, 30);
    if (await killAtSeededPoint(k === 0 ? run : resume, () => (judgeCalls() >= at ? 1 : 0), random.between(0, 20))) {
      killed += 1;
      // Vignettes with calls stored and no record yet: the kill cut their chains.
      if (readCount(dbPath, `SELECT COUNT(*) AS n FROM finished_stages`) > 0) midTemplate += 1;
    }
  }
  const last = await runCli(resume);
  expect(last.code, `seed ${random.seed}: ${last.stderr}`).toBe(0);
  expect(killed, `seed ${random.seed}: the kills landed while the run was posing`).toBeGreaterThan(0);
  expect(midTemplate, `seed ${random.seed}: a kill cut a vignette's chain`).toBeGreaterThan(0);

  const e = openEngine({ dataDir, catalogPaths: [providers.catalog()], readonly: true });
  try {
    const stats = await e.service.stats({});
    expect(stats.totalCalls, `seed ${random.seed}`).toBe(VIGNETTES);
    const judged = stats.judges.reduce((n, u) => n + u.calls, 0);
    const asked = providers.judge.requests();
    // At least an undisturbed run's: the vignettes a kill cut were judged again, and are counted.
    expect(asked, `seed ${random.seed}`).toBeGreaterThanOrEqual(VIGNETTES);
    // Never fewer than were asked; more only by calls counted at a kill whose request had not left.
    const over = judged - asked;
    expect(over, `seed ${random.seed}: ${judged} stored, ${asked} asked`).toBeGreaterThanOrEqual(0);
    expect(over, `seed ${random.seed}: ${judged} stored, ${asked} asked`).toBeLessThanOrEqual(CALLS_IN_FLIGHT * killed);
    // Tokens come with the answers (3 out a call): only those of the calls in flight at a kill are unknown.
    const tokens = stats.judges[0]!.outputTokens;
    expect(tokens, `seed ${random.seed}`).toBeLessThanOrEqual(3 * judged);
    expect(tokens, `seed ${random.seed}`).toBeGreaterThanOrEqual(3 * (judged - CALLS_IN_FLIGHT * killed));
    expect(stats.totalJudgeCostUsd, `seed ${random.seed}`).toBeGreaterThan(0);
  } finally {
    await e.close();
  }
}, 240_000);
