#!/usr/bin/env node
/**
 * Promptfoo's own cases for the import's promptfoo fixtures, as the reference the import's vignettes
 * are checked against (test/import/promptfoo-reference.test.ts): promptfoo itself evaluates each
 * config with its `echo` provider (which answers with the rendered prompt, calling no model) and
 * `echo` as the grader, and its output JSON gives the cases per provider — one per prompt x test
 * case after vars expansion and defaultTest — with each case's prompt index, test index and the
 * prompt as promptfoo rendered it. The `assertion-outcomes` config brings its own provider (it
 * answers each test with its `answer` var): for it, each case also keeps the answer and promptfoo's
 * verdict on each of its assertions (test/import/promptfoo-verdicts.test.ts checks the import's
 * scorers give the same). Writes test/import/fixtures/promptfoo-reference.json.
 *
 * Install promptfoo OUTSIDE the repository (it is no dependency of Panoptes), then run from the
 * repository's root:
 *   mkdir -p /tmp/pf && (cd /tmp/pf && npm install --no-audit --no-fund promptfoo@0.115.0)
 *   node scripts/promptfoo-reference.mjs /tmp/pf/node_modules/.bin/promptfoo
 * (0.115.0 is the last promptfoo that runs on Node 20; its better-sqlite3 must be built.)
 * Runs on: Node (a maintainer's tool).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const bin = process.argv[2];
if (!bin) {
  console.error('usage: node scripts/promptfoo-reference.mjs PATH/TO/promptfoo');
  process.exit(2);
}
const FIXTURES = join(process.cwd(), 'test', 'import', 'fixtures');
/** Each config, and whether promptfoo's echo provider answers it (else the config's own provider does, and its verdicts are kept). */
const CONFIGS = [
  { name: 'getting-started', echo: true },
  { name: 'every-assertion', echo: true },
  { name: 'assertion-outcomes', echo: false },
];
const work = mkdtempSync(join(tmpdir(), 'promptfoo-reference-'));
// Promptfoo keeps its database and settings under HOME: a temporary one, with no telemetry or update check.
const env = { ...process.env, HOME: work, PROMPTFOO_CONFIG_DIR: join(work, '.promptfoo'), PROMPTFOO_DISABLE_TELEMETRY: '1', PROMPTFOO_DISABLE_UPDATE: '1' };
const version = execFileSync(bin, ['--version'], { env, encoding: 'utf8' }).trim().split('\n').pop();
const command = 'promptfoo eval -c promptfooconfig.yaml -r echo --grader echo --no-cache --no-table -o OUT.json';

const configs = {};
try {
  for (const { name, echo } of CONFIGS) {
    const dir = join(work, name);
    cpSync(join(FIXTURES, name), dir, { recursive: true });
    const out = join(work, `${name}.json`);
    // Exit 100 means some assertions failed (an echo answers little right): the cases are there all the same.
    const providers = echo ? ['-r', 'echo'] : [];
    const res = spawnSync(bin, ['eval', '-c', 'promptfooconfig.yaml', ...providers, '--grader', 'echo', '--no-cache', '--no-table', '-o', out], { cwd: dir, env, encoding: 'utf8', timeout: 300_000 });
    if (res.status !== 0 && res.status !== 100) throw new Error(`promptfoo eval of ${name} exited ${res.status}: ${res.stderr}`);
    const results = JSON.parse(readFileSync(out, 'utf8')).results.results;
    const cases = results
      .map((r) => ({
        prompt_index: r.promptIdx,
        test_index: r.testIdx,
        prompt: r.prompt.raw,
        ...(echo
          ? {}
          : {
              answer: r.response.output,
              verdicts: r.gradingResult.componentResults.map((c) => ({ type: c.assertion.type, value: c.assertion.value ?? null, metric: c.assertion.metric ?? null, weight: c.assertion.weight ?? 1, pass: c.pass, score: c.score })),
            }),
      }))
      .sort((a, b) => a.prompt_index - b.prompt_index || a.test_index - b.test_index);
    configs[name] = {
      prompts: new Set(cases.map((c) => c.prompt_index)).size,
      tests: new Set(cases.map((c) => c.test_index)).size,
      cases_per_provider: cases.length,
      cases,
    };
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
const path = join(FIXTURES, 'promptfoo-reference.json');
writeFileSync(path, `${JSON.stringify({ made_by: 'scripts/promptfoo-reference.mjs', promptfoo: version, command, configs }, null, 1)}\n`);
console.log(`wrote ${path}: ${CONFIGS.map(({ name }) => `${name} ${configs[name].cases_per_provider} cases`).join(', ')} (promptfoo ${version})`);
