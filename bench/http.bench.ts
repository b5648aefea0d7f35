/**
 * The HTTP API under load: a 1,000,000-record database (100,000 vignettes x 5 models x 2 epochs,
 * written straight through the Store in big transactions), `panoptes serve` over it in a child
 * process, and autocannon in this process at 100 connections against `GET /stats` and
 * `GET /runs/:id`; then one streamed `GET /runs/:id/responses.jsonl` of the whole million.
 * Reports requests/s, p50/p99 latency as the client saw it and as the server logged it (time inside
 * the server), errors (only 429/503 are allowed answers besides 200), and the server's RSS and peak
 * RSS (VmHWM). The same load against a bare Fastify "hello" server gives the machine's own floor,
 * for reading the figures on a busy or slow machine. Targets: /stats p99 < 50 ms; no request fails
 * outright; the export streams in flat memory.
 * Runs on: Node.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { IndexedVignette, ResponseRecord } from '../core/domain.js';
import { databasePath, packageRoot } from '../core/paths.js';
import { DEFAULT_RUN_OPTIONS } from '../core/service/control-service.js';
import { Store } from '../core/store/store.js';
import { round } from './support.js';

const VIGNETTES = Number(process.env.BENCH_HTTP_VIGNETTES ?? 100_000);
const MODELS = ['m1', 'm2', 'm3', 'm4', 'm5'];
const EPOCHS = 2;
const CONNECTIONS = 100;
const DURATION_S = Number(process.env.BENCH_HTTP_SECONDS ?? 10);
const TOKEN = 'bench-token-0123456789abcdefghij';
const RUN_ID = 'rbench';

/** Writes the run, its vignettes, jobs and every record directly, one big transaction per batch. */
function buildDatabase(dataDir: string): number {
  mkdirSync(dataDir, { recursive: true });
  const store = new Store(databasePath(dataDir));
  try {
    const vignettes: IndexedVignette[] = Array.from({ length: VIGNETTES }, (_, i) => ({
      index: i,
      id: `v${i}`,
      prompt: `Vignette ${i}: a patient presents with symptom ${i % 97}. What next?`,
    }));
    store.runs.beginStaging(RUN_ID);
    store.runs.stageVignettes(RUN_ID, vignettes);
    store.runs.insertRun({ id: RUN_ID, manifestPath: '/bench.jsonl', models: MODELS, epochs: EPOCHS, vignetteCount: VIGNETTES, options: DEFAULT_RUN_OPTIONS });
    store.runs.claimRun(RUN_ID, 'bench', 60_000);
    const jobs = store.jobs.insertJobs(RUN_ID, MODELS.flatMap((model) => Array.from({ length: EPOCHS }, (_, e) => ({ model, epoch: e + 1 }))));
    let records = 0;
    for (const job of jobs) {
      const attempt = store.jobs.startAttempt(job.id, 'bench')!;
      const batch: ResponseRecord[] = vignettes.map((v) => ({
        runId: RUN_ID,
        jobId: job.id,
        vignetteId: v.id,
        vignetteIndex: v.index,
        model: job.model,
        epoch: job.epoch,
        prompt: v.prompt,
        response: `[${job.model}] the model considers the evidence for vignette ${v.index} and answers that it depends on context.`,
        usage: { inputTokens: 20 + (v.index % 13), outputTokens: 30 + (v.index % 90) },
        latencyMs: 5,
        host: `bench/${job.model}`,
        cached: false,
        sampling: {},
        finishedAt: Date.now(),
      }));
      records += store.records.append(job.id, attempt, batch).length;
      const usage = batch.reduce((u, r) => ({ inputTokens: u.inputTokens + r.usage.inputTokens, outputTokens: u.outputTokens + r.usage.outputTokens }), { inputTokens: 0, outputTokens: 0 });
      store.records.settle({ jobId: job.id, attempt, workerId: 'bench', vignettesDone: VIGNETTES, usage });
    }
    const settled = store.runs.settleRun(RUN_ID);
    if (settled.run.status !== 'done') throw new Error(`seeded run is ${settled.run.status}`);
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    return records;
  } finally {
    store.close();
  }
}

/** Starts `panoptes serve` over the data dir; resolves with its pid and URL once it listens. */
function startServer(dataDir: string, logPath: string) {
  const bin = fileURLToPath(new URL('../../bin/panoptes.cjs', import.meta.url));
  const logFd = openSync(logPath, 'w');
  const child = spawn(process.execPath, [bin, 'serve', '--data-dir', dataDir, '--port', '0', '--token', TOKEN], {
    stdio: ['ignore', 'pipe', logFd] as const,
    env: { ...process.env, PANOPTES_LOG: process.env.PANOPTES_LOG ?? 'info' },
  });
  closeSync(logFd);
  const ready = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /serving the HTTP API at (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code} before listening: ${out}`)));
  });
  return { child, ready };
}

/** A bare Fastify server answering `GET /` with a tiny JSON object: the floor for this machine. */
async function startBaseline() {
  const script = `import Fastify from 'fastify';
const app = Fastify();
app.get('/', async () => ({ ok: true }));
await app.listen({ host: '127.0.0.1', port: 0 });
console.log('port ' + app.server.address().port);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: packageRoot(), stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /port (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`baseline server exited ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

/** p50 and p99 of the latency the server logged for requests to `path` (its one line per request). */
function serverSideLatency(logPath: string, path: string): { p50_ms: number; p99_ms: number; lines: number } {
  const latencies: number[] = [];
  for (const line of readFileSync(logPath, 'utf8').split('\n')) {
    if (!line.includes('"msg":"request"')) continue;
    const entry = JSON.parse(line) as { path?: string; latency_ms?: number };
    if (entry.path === path && typeof entry.latency_ms === 'number') latencies.push(entry.latency_ms);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { p50_ms: at(0.5), p99_ms: at(0.99), lines: latencies.length };
}

/** The server's current and peak resident memory, in MB, from /proc. */
function serverMemory(pid: number): { rss_mb: number; peak_rss_mb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss_mb: round(kb('VmRSS') / 1024, 1), peak_rss_mb: round(kb('VmHWM') / 1024, 1) };
}

async function load(url: string, path: string, seconds: number) {
  const result = await autocannon({
    url: `${url}${path}`,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const byStatus = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, (s as { count: number }).count]));
  const failedOutright = result.errors + result.timeouts + Object.entries(byStatus).filter(([c]) => !['200', '429', '503'].includes(c)).reduce((s, [, n]) => s + n, 0);
  return {
    requests: result.requests.total,
    requests_per_sec: round(result.requests.average, 0),
    latency_p50_ms: result.latency.p50,
    latency_p99_ms: result.latency.p99,
    latency_max_ms: result.latency.max,
    status_codes: byStatus,
    shed_429_503: (byStatus['429'] ?? 0) + (byStatus['503'] ?? 0),
    failed_outright: failedOutright,
  };
}

/** Streams the whole export once, counting lines; samples the server's RSS while it runs. */
function streamExport(url: string, pid: number): Promise<{ lines: number; bytes: number; ms: number; server_rss_mb_max_during: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let lines = 0;
    let bytes = 0;
    let rssMax = 0;
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, serverMemory(pid).rss_mb)), 200);
    const req = request(`${url}/runs/${RUN_ID}/responses.jsonl`, { headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`export answered ${res.statusCode}`));
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
      });
      res.on('end', () => {
        clearInterval(sampler);
        resolve({ lines, bytes, ms: round(performance.now() - started, 0), server_rss_mb_max_during: rssMax });
      });
    });
    req.on('error', (err) => {
      clearInterval(sampler);
      reject(err);
    });
    req.end();
  });
}

const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-http-'));
const dataDir = join(dir, 'data');
const server = { child: undefined as ReturnType<typeof startServer>['child'] | undefined };
try {
  const t0 = performance.now();
  const records = buildDatabase(dataDir);
  const buildMs = performance.now() - t0;
  if (records !== VIGNETTES * MODELS.length * EPOCHS) throw new Error(`built ${records} records`);

  const baseline = await startBaseline();
  await load(baseline.url, '/', 1); // warm-up
  const floor = await load(baseline.url, '/', DURATION_S);
  baseline.child.kill('SIGTERM');

  const logPath = join(dir, 'serve.log');
  const started = startServer(dataDir, logPath);
  server.child = started.child;
  const url = await started.ready;
  const pid = started.child.pid!;
  const idle = serverMemory(pid);

  await load(url, '/stats', 1); // warm-up
  const stats = await load(url, '/stats', DURATION_S);
  const runDetail = await load(url, `/runs/${RUN_ID}`, DURATION_S);
  const afterLoad = serverMemory(pid);
  const exported = await streamExport(url, pid);
  const afterExport = serverMemory(pid);

  console.log(
    JSON.stringify({
      scenario: `${records} records (${VIGNETTES} x ${MODELS.length} x ${EPOCHS}); ${CONNECTIONS} connections, ${DURATION_S} s per route`,
      build_db_ms: round(buildMs, 0),
      machine_floor_bare_fastify: floor,
      stats: { ...stats, server_side: serverSideLatency(logPath, '/stats') },
      run_detail: { ...runDetail, server_side: serverSideLatency(logPath, `/runs/${RUN_ID}`) },
      export_jsonl: { ...exported, lines_per_sec: round(exported.lines / (exported.ms / 1000), 0) },
      server_rss_mb_idle: idle.rss_mb,
      server_rss_mb_after_load: afterLoad.rss_mb,
      server_rss_mb_after_export: afterExport.rss_mb,
      server_peak_rss_mb: afterExport.peak_rss_mb,
      load_average_1m: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
      target_stats_p99_ms: 50,
      stats_p99_ok: stats.latency_p99_ms < 50,
      no_request_failed_outright: stats.failed_outright === 0 && runDetail.failed_outright === 0,
      export_exactly_all_records: exported.lines === records,
    }),
  );
} finally {
  if (server.child && server.child.exitCode === null) {
    const exited = new Promise((r) => server.child!.once('exit', r));
    server.child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}
