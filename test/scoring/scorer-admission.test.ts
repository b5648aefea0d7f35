/**
 * Scorers are admitted in one place (core/scoring/scorer-admission.ts): a definition this process
 * cannot build — a url_health plugin asking for the network in a process not started with
 * --allow-network — is refused with the same reason, naming its field, through the CLI (a real
 * child process), the HTTP API (a real socket), and on resume, where another process attached it
 * and this one cannot build the stored version (logged, and its records left pending). A
 * definition the schema refuses is named the same way by the CLI's file reader, a stored
 * version's parse and a template's judge loop, which builds its scorers once per set of versions.
 * Runs on: Node (tests).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import { ScorerAdmission, parseScoringConfig } from '../../core/scoring/scorer-admission.js';
import { ScorerRegistry } from '../../core/scoring/scorer-registry.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeTargetManifest } from '../helpers/temp.js';
import { useTempEngines } from '../helpers/temp-engine.js';
import { startApi, type ApiHarness } from '../http/harness.js';

const LINKS = { name: 'links', type: 'code', builtin: 'url_health', capabilities: ['network'] };
const REASON = 'capabilities: the scorer asks for the "network" capability, and this process was not started allowing it (--allow-network)';

describe('a definition this process cannot build', () => {
  const engines = useTempEngines();
  let api: ApiHarness | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('is refused through the CLI, naming the field, and nothing is attached', async () => {
    const tmp = tempDir();
    try {
      const dataDir = join(tmp.dir, 'data');
      writeStoredRun(dataDir, { runId: 'radmit', vignettes: 4, epochs: 1, models: [{ model: 'mock-strong', accuracy: 0.8 }] });
      const file = join(tmp.dir, 'scorers.json');
      writeFileSync(file, JSON.stringify({ scorers: [LINKS] }));
      const refused = await runCli(['score', 'radmit', '--scorers', file, '--data-dir', dataDir]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`scorers.0.${REASON}`);
      const status = await runCli(['report', 'radmit', '--json', '--data-dir', dataDir]);
      expect(status.stderr).toContain('has no scorers yet');
    } finally {
      tmp.cleanup();
    }
  });

  it('is refused through HTTP with the same words and the field', async () => {
    api = await startApi();
    const manifest = writeTargetManifest(api.dir, 3);
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['fast'], epochs: 1, scorers: { scorers: [LINKS] } } });
    expect(created.status).toBe(400);
    expect(created.json.error).toMatchObject({ code: 'invalid_input', where: 'scorers.0.capabilities', message: `scorers.0.${REASON}` });
    expect((await api.call('GET', '/runs')).json.runs).toHaveLength(0);
  });

  it('is logged with the same words on resume, where another process attached it, and its records stay pending', async () => {
    const manifest = writeTargetManifest(engines.dir, 5);
    const allowing = engines.open({ allowPluginNetwork: true });
    const run = await allowing.service.createRun({ manifestPath: manifest, models: ['mock-strong'], epochs: 1, scorers: { scorers: [LINKS as never, { name: 'exact', type: 'match' }] } });
    await allowing.close();

    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(line) });
    const resumed = engines.open({ logger, tickMs: 20 });
    await resumed.scheduler.runToCompletion(run.id);
    await resumed.scoring.finish(run.id);
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; scorer?: string; err?: { message: string } }).filter((l) => l.msg === 'stored scorer cannot be built here');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ scorer: 'links', err: { message: `scorer links.${REASON}` } });
    const status = await resumed.service.scoringStatus({ runId: run.id });
    expect(status.scorers.map((s) => [s.name, s.done, s.pending])).toEqual([
      ['links', 0, 5],
      ['exact', 5, 0],
    ]);
    // The report reads the same pending count from the scorer's row.
    expect((await resumed.service.report({ runId: run.id, scorer: 'links' })).pending).toBe(5);
  });
});

describe('a definition the schema refuses', () => {
  it('is named by its field when read from a file and when a stored version is built', () => {
    const bad = { name: 'short', type: 'words', min: 5, max: 2 };
    expect(() => parseScoringConfig({ scorers: [bad] }, 'scorers.yaml')).toThrow('scorers.yaml: scorers.0.max: min is above max');
    const stored = new ScorerAdmission(new ScorerRegistry()).storedScorer({ version: 'v1', name: 'short', definition: bad }, (c) => c);
    expect(stored.error?.message).toBe('scorer short.max: min is above max');
    expect(stored.error).toMatchObject({ code: 'invalid_input', where: 'scorer short' });
  });
});

describe("a template's judge loop", () => {
  it('is built once per set of versions (key order makes no new one), its definitions refused by field', async () => {
    const admission = new ScorerAdmission(new ScorerRegistry());
    const first = admission.stageScorers([{ name: 'short', type: 'words', max: 5 }]);
    expect(first.map((b) => b.scorer.name)).toEqual(['short']);
    expect(admission.stageScorers([{ max: 5, type: 'words', name: 'short' }])).toBe(first);
    expect(admission.stageScorers([{ name: 'short', type: 'words', max: 6 }])).not.toBe(first);
    expect(() => admission.stageScorers([{ name: 'short', type: 'words', min: 5, max: 2 }])).toThrow('scorers.0.max: min is above max');
    await admission.close();
    expect(admission.stageScorers([{ name: 'short', type: 'words', max: 5 }])).not.toBe(first);
  });
});
