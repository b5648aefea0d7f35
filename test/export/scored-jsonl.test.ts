/**
 * The JSONL export with scores: each record carries a `scores` object, a key per scorer of the run
 * with the verdict the score rows hold (value, passed, kind, severity; null while unscored), through
 * the contract, `panoptes export --scores` (a real child process), `GET /runs/:id/responses.jsonl?scores=1`
 * and the browser bridge's link; `--format scores` still writes the line-per-verdict file. The export
 * streams: when its first line is out, it has read one page of records, not the run.
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import type { StoredResponse } from '../../core/domain.js';
import { bridgeSources } from '../../core/http/bridge.js';
import { RunExports } from '../../core/service/run-export.js';
import { ResponseScores } from '../../core/store/response-scores.js';
import { ScoreStore } from '../../core/store/score-store.js';
import { runCli } from '../helpers/cli.js';
import { startApi, type ApiHarness } from '../http/harness.js';

const RUN = 'rjsonl';
const VIGNETTES = 600;
const RECORDS = VIGNETTES * 2;

interface Line {
  seq: number;
  vignette_id: string;
  model: string;
  scores?: Record<string, { value: number; passed: boolean | null; kind: string; severity: string } | null>;
}

const parse = (text: string) => text.trim().split('\n').map((l) => JSON.parse(l) as Line);

describe('the JSONL export with scores', () => {
  let api: ApiHarness;
  let truth: Map<string, { value: number; passed: number | null }>;
  let kinds: Map<string, string>;

  beforeAll(async () => {
    api = await startApi({ startScheduler: false });
    writeStoredRun(api.dataDir, { runId: RUN, vignettes: VIGNETTES, epochs: 1, models: [{ model: 'mock-strong', accuracy: 0.8 }, { model: 'mock-weak', accuracy: 0.5 }] });
    api.engine.scoring.start();
    await api.engine.service.scoreRun({
      runId: RUN,
      scorers: { scorers: [{ name: 'exact', type: 'match' }, { name: 'terse', type: 'words', max: 0, severity: 'soft' }] },
    });
    await api.engine.scoring.finish(RUN);
    const rows = api.engine.store.db
      .prepare(`SELECT sc.seq, s.name, s.kind, sc.value, sc.passed FROM scores sc JOIN scorers s ON s.id = sc.scorer_id WHERE sc.failed = 0`)
      .all() as Array<{ seq: number; name: string; kind: string; value: number; passed: number | null }>;
    truth = new Map(rows.map((r) => [`${r.seq}|${r.name}`, r]));
    kinds = new Map(rows.map((r) => [r.name, r.kind]));
  });
  afterAll(async () => api.close());

  /** Every record once, each scorer's cell the score row's verdict. */
  function expectScored(lines: Line[]): void {
    expect(lines).toHaveLength(RECORDS);
    expect(new Set(lines.map((l) => l.seq)).size).toBe(RECORDS);
    for (const l of lines) {
      expect(Object.keys(l.scores!)).toEqual(['exact', 'terse']);
      for (const name of ['exact', 'terse']) {
        const own = truth.get(`${l.seq}|${name}`)!;
        expect(l.scores![name]).toEqual({ value: own.value, passed: own.passed === 1, kind: kinds.get(name), severity: expect.any(String) });
      }
    }
    const terse = lines.map((l) => l.scores!.terse!);
    // Every answer has a word: terse (max 0 words) fails each, softly.
    expect(terse.every((c) => c.passed === false && c.severity === 'soft')).toBe(true);
    expect(lines.some((l) => l.scores!.exact!.passed) && lines.some((l) => !l.scores!.exact!.passed)).toBe(true);
  }

  it('carries a scores object per record through the contract, and none without the flag', async () => {
    const out = join(api.dir, 'scored.jsonl');
    const res = await api.engine.service.exportRun({ runId: RUN, format: 'jsonl', scores: true, outPath: out });
    expect(res.lines).toBe(RECORDS);
    expectScored(parse(readFileSync(out, 'utf8')));
    await api.engine.service.exportRun({ runId: RUN, format: 'jsonl', outPath: out });
    expect(parse(readFileSync(out, 'utf8')).every((l) => l.scores === undefined)).toBe(true);
  });

  it('writes it from `panoptes export --scores`, and the per-verdict file from `--format scores`', async () => {
    const out = join(api.dir, 'cli.jsonl');
    const cli = await runCli(['export', RUN, '--scores', '--out', out, '--data-dir', api.dataDir]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toBe(`wrote ${RECORDS} lines to ${out}\n`);
    expectScored(parse(readFileSync(out, 'utf8')));

    const verdicts = join(api.dir, 'verdicts.jsonl');
    expect((await runCli(['export', RUN, '--format', 'scores', '--out', verdicts, '--data-dir', api.dataDir])).code).toBe(0);
    const lines = readFileSync(verdicts, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(RECORDS * 2);
    expect(Object.keys(lines[0]!)).toEqual(['vignette_id', 'model', 'epoch', 'attempt', 'scorer', 'version', 'value', 'passed', 'explanation', 'judge']);
  });

  it('streams it over GET /runs/:id/responses.jsonl?scores=1 and the bridge link, and refuses another value', async () => {
    const http = await api.call('GET', `/runs/${RUN}/responses.jsonl?scores=1`);
    expect(http.status).toBe(200);
    expectScored(parse(http.text));
    expect(parse((await api.call('GET', `/runs/${RUN}/responses.jsonl`)).text).every((l) => l.scores === undefined)).toBe(true);
    const bad = await api.call('GET', `/runs/${RUN}/responses.jsonl?scores=yes`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('scores');
    // The browser bridge's download (the Export view's Score columns box with JSONL) asks for the same lines.
    expectScored(parse([...bridgeSources(api.engine).exportLines(RUN, 'jsonl', true)].join('')));
  });

  it('has read one page of records when its first line is out', () => {
    let pulled = 0;
    const queries = {
      *iterateResponses(runId: string): IterableIterator<StoredResponse> {
        for (const r of api.engine.store.queries.iterateResponses(runId)) {
          pulled += 1;
          yield r;
        }
      },
    };
    const exports = new RunExports(queries, new ScoreStore(api.engine.store), () => () => 0, new ResponseScores(api.engine.store));
    const lines = exports.lines(RUN, 'jsonl_scores');
    expect(lines.next().done).toBe(false);
    expect(pulled).toBe(500);
    let n = 1;
    while (!lines.next().done) n += 1;
    expect([n, pulled]).toEqual([RECORDS, RECORDS]);
  });
});
