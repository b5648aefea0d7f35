import type { DestinationStream } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { initTelemetry, resetTelemetryForTests } from '../../core/telemetry.js';
import { writeManifest } from '../helpers/temp.js';
import { TOKEN, startApi, waitForRun, type ApiHarness } from './harness.js';

interface LogLine {
  level: number;
  msg: string;
  component?: string;
  run_id?: string;
  job_id?: number;
  method?: string;
  path?: string;
  status?: number;
  latency_ms?: number;
}

/** Starts the process logger afresh at `level`, writing into an array. */
function captureLogs(level: string): { lines: LogLine[]; raw: string[] } {
  const raw: string[] = [];
  const destination: DestinationStream = { write: (line: string) => void raw.push(line) };
  resetTelemetryForTests();
  process.env.PANOPTES_LOG = level;
  initTelemetry({ destination });
  return {
    raw,
    get lines() {
      return raw.map((l) => JSON.parse(l) as LogLine);
    },
  };
}

describe('telemetry', () => {
  let api: ApiHarness;
  const savedLevel = process.env.PANOPTES_LOG;
  afterEach(async () => {
    await api?.close();
    if (savedLevel === undefined) delete process.env.PANOPTES_LOG;
    else process.env.PANOPTES_LOG = savedLevel;
    resetTelemetryForTests();
  });

  it('stamps every line emitted inside a run with its run_id, logs every request, and never logs eval text', async () => {
    const logs = captureLogs('debug');
    api = await startApi();
    const manifest = writeManifest(api.dir, 15);
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['fast', 'flaky'], epochs: 2 } });
    expect(created.status).toBe(201);
    const runId = created.json.id as string;
    await waitForRun(api, runId);
    await api.call('GET', '/stats');
    await api.call('GET', '/stats', { headers: { authorization: 'Bearer wrong-token-of-some-length' } });

    const lines = logs.lines;
    const engineLines = lines.filter((l) => l.component !== 'http');
    const messages = new Set(engineLines.map((l) => l.msg));
    for (const m of ['run claimed', 'planned jobs for run', 'dispatching job', 'job finished', 'run finished']) expect(messages).toContain(m);
    // Every line the engine wrote while processing the run carries the run's id, once — the
    // scheduler's own lines and the router's penalties (each model call carries its run).
    for (const l of engineLines) expect(l.run_id, JSON.stringify(l)).toBe(runId);
    expect(engineLines.some((l) => l.component === 'router')).toBe(true);
    for (const raw of logs.raw) expect(raw.split('"run_id":').length, raw).toBeLessThanOrEqual(2);
    // Lines about a job carry the job too (bound once, on the run's child logger).
    expect(engineLines.filter((l) => l.msg === 'dispatching job').every((l) => typeof l.job_id === 'number')).toBe(true);

    // One line per request: method, path, status, latency; run routes carry run_id.
    const requests = lines.filter((l) => l.component === 'http' && l.msg === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(4);
    for (const r of requests) {
      expect(r).toMatchObject({ method: expect.any(String), path: expect.stringMatching(/^\//), status: expect.any(Number) });
      expect(r.latency_ms).toBeGreaterThanOrEqual(0);
      if (r.path?.startsWith(`/runs/${runId}`)) expect(r.run_id).toBe(runId);
    }
    expect(requests.some((r) => r.method === 'POST' && r.path === '/runs' && r.status === 201)).toBe(true);
    expect(requests.some((r) => r.path === '/stats' && r.status === 401)).toBe(true);

    // Neither prompts, nor responses, nor the token reach the log.
    const text = logs.raw.join('');
    expect(text).not.toContain('Question number');
    expect(text).not.toContain('[fast]');
    expect(text).not.toContain(TOKEN);
  });

  it('PANOPTES_LOG=warn quiets a healthy run and its requests', async () => {
    const logs = captureLogs('warn');
    api = await startApi();
    const manifest = writeManifest(api.dir, 5);
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['fast'], epochs: 2 } });
    await waitForRun(api, created.json.id);
    expect(logs.lines.filter((l) => l.level < 40)).toEqual([]);
  });
});
