/**
 * The router side by side with promptfoo (issue 6): the full engine sweeping through the router's
 * `openai` provider to a fake OpenAI-compatible server in a separate process on 127.0.0.1, at most
 * 4 calls in flight, caching off (noStore), SQLite and responses.jsonl written.
 *   A: 2,000 vignettes x 2 models x 1 epoch, server answers at once  -> calls/s   (target >= 2,000)
 *   B:   200 vignettes x 2 models x 3 epochs, server answers in 50 ms -> wall / ideal (target <= 1.05)
 * Ideal wall time for B: calls x 50 ms / 4 in flight. Peak RSS of the engine process (target < 150 MB).
 * `machine_floor` is a bare node:http client doing the same calls, for scale: on a loaded machine
 * neither target is reachable by anything. With PROMPTFOO_BIN set (a promptfoo 0.123 installed
 * outside the project; it needs Node >= 22.22), the same work is run once through `promptfoo eval`
 * against the same server for comparison; otherwise only Panoptes.
 * `node router.bench.js --serve DELAY_MS` is the fake server itself (the child process).
 * Runs on: Node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http, { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openEngine } from '../core/service/engine.js';
import { initTelemetry } from '../core/telemetry.js';
import { round, writeBenchManifest } from './support.js';

interface Scenario {
  name: string;
  vignettes: number;
  models: string[];
  epochs: number;
  delayMs: number;
}

const SCENARIOS: Scenario[] = [
  { name: '2000 x 2 x 1 at 0 ms', vignettes: 2000, models: ['bench-a', 'bench-b'], epochs: 1, delayMs: 0 },
  { name: '200 x 2 x 3 at 50 ms', vignettes: 200, models: ['bench-a', 'bench-b'], epochs: 3, delayMs: 50 },
];
const IN_FLIGHT = 4;

/** The fake provider: answers chat completions like OpenAI, after `delayMs`. */
function serve(delayMs: number): void {
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      n += 1;
      const { model } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string };
      const body = JSON.stringify({
        id: `chatcmpl-${n}`,
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: `Answer ${n}: consider the evidence, then act.` }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 24, completion_tokens: 12, total_tokens: 36 },
      });
      const send = () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      };
      if (delayMs > 0) setTimeout(send, delayMs);
      else send();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(JSON.stringify({ port: (server.address() as { port: number }).port }) + '\n');
  });
}

async function startServer(delayMs: number): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', String(delayMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const [first] = (await once(lines, 'line')) as [string];
  lines.close();
  const { port } = JSON.parse(first) as { port: number };
  return { child, url: `http://127.0.0.1:${port}` };
}

function writeCatalog(dir: string, url: string, models: string[]): string {
  const path = join(dir, 'bench-catalog.json');
  writeFileSync(
    path,
    JSON.stringify({
      providers: { fake: { kind: 'openai', baseUrl: `${url}/v1`, trainsOnData: false, timeoutMs: 30_000 } },
      models: Object.fromEntries(
        models.map((m) => [m, { hosts: [{ provider: 'fake', model: m, contextWindow: 128_000, inputPerMTok: 0.15, outputPerMTok: 0.6 }] }]),
      ),
    }),
  );
  return path;
}

/**
 * The machine's floor: the same calls from a bare node:http keep-alive client, 4 in flight, no
 * engine. What Panoptes cannot beat on this machine at this moment (timers and scheduling on a
 * loaded 2-core box add milliseconds per call on their own).
 */
async function rawHttpFloor(url: string, calls: number, delayMs: number): Promise<Record<string, number>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const body = JSON.stringify({ model: 'floor', messages: [{ role: 'user', content: 'floor' }] });
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(`${url}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.on('data', () => undefined);
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  let started = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (started < calls) {
        started += 1;
        await post();
      }
    }),
  );
  const wallMs = performance.now() - t0;
  agent.destroy();
  return delayMs > 0
    ? { raw_http_calls: calls, raw_http_wall_over_ideal: round(wallMs / ((calls * delayMs) / IN_FLIGHT), 3) }
    : { raw_http_calls: calls, raw_http_calls_per_sec: round(calls / (wallMs / 1000), 0) };
}

/** Peak RSS of this process (kernel high-water mark), MB. */
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

async function runPanoptes(s: Scenario, url: string, dir: string): Promise<Record<string, number>> {
  const manifest = join(dir, `manifest-${s.vignettes}.jsonl`);
  await writeBenchManifest(manifest, s.vignettes);
  const engine = openEngine({ dataDir: join(dir, `data-${s.delayMs}`), catalogPaths: [writeCatalog(dir, url, s.models)], callConcurrency: IN_FLIGHT });
  try {
    const calls = s.vignettes * s.models.length * s.epochs;
    const t0 = performance.now();
    const run = await engine.service.createRun({ manifestPath: manifest, models: s.models, epochs: s.epochs, noStore: true });
    const t1 = performance.now();
    const final = await engine.scheduler.runToCompletion(run.id);
    const wallMs = performance.now() - t0;
    const runMs = performance.now() - t1;
    if (final.status !== 'done') throw new Error(`run ended ${final.status}: ${final.error}`);
    const lines = readFileSync(join(engine.dataDir, 'runs', run.id, 'responses.jsonl'), 'utf8').trim().split('\n').length;
    if (lines !== calls || engine.store.responseCount(run.id) !== calls) throw new Error(`expected ${calls} records, got ${lines}`);
    const idealMs = (calls * s.delayMs) / IN_FLIGHT;
    return {
      calls,
      wall_ms: round(wallMs, 0),
      calls_per_sec: round(calls / (wallMs / 1000), 0),
      // Without reading and staging the manifest (createRun): the calls alone.
      run_only_calls_per_sec: round(calls / (runMs / 1000), 0),
      ...(s.delayMs > 0 ? { ideal_ms: idealMs, wall_over_ideal: round(wallMs / idealMs, 3) } : {}),
    };
  } finally {
    await engine.close();
  }
}

/** The same work through promptfoo (when PROMPTFOO_BIN points at one): wall time and its peak RSS. */
async function runPromptfoo(bin: string, s: Scenario, url: string, dir: string): Promise<Record<string, number | string>> {
  const work = join(dir, `promptfoo-${s.delayMs}`);
  const tests = join(dir, `tests-${s.vignettes}.jsonl`);
  const lines: string[] = [];
  for (let i = 0; i < s.vignettes; i++) {
    lines.push(JSON.stringify({ vars: { prompt: `Vignette ${i}: a patient presents with symptom ${i % 97}. What next?` } }));
  }
  writeFileSync(tests, lines.join('\n') + '\n');
  const config = join(dir, `promptfooconfig-${s.delayMs}.yaml`);
  writeFileSync(
    config,
    [
      'prompts:',
      "  - '{{prompt}}'",
      'providers:',
      ...s.models.map((m) => `  - id: openai:chat:${m}\n    config:\n      apiBaseUrl: ${url}/v1\n      apiKey: bench`),
      `tests: file://${tests}`,
      'evaluateOptions:',
      `  maxConcurrency: ${IN_FLIGHT}`,
      `  repeat: ${s.epochs}`,
      '',
    ].join('\n'),
  );
  const calls = s.vignettes * s.models.length * s.epochs;
  const t0 = performance.now();
  const child = spawn(bin, ['eval', '-c', config, '--no-cache', '-j', String(IN_FLIGHT), '--repeat', String(s.epochs), '--no-progress-bar', '--no-table', '--no-share', '-o', join(dir, `promptfoo-${s.delayMs}.jsonl`)], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, PROMPTFOO_CONFIG_DIR: work, PROMPTFOO_DISABLE_TELEMETRY: '1', PROMPTFOO_DISABLE_UPDATE: '1', OPENAI_API_KEY: 'bench' },
  });
  // Peak RSS over the whole process tree, sampled from /proc.
  let peakKb = 0;
  const sample = setInterval(() => (peakKb = Math.max(peakKb, treeRssKb(child.pid!))), 100);
  const [code] = (await once(child, 'exit')) as [number];
  clearInterval(sample);
  const wallMs = performance.now() - t0;
  const idealMs = (calls * s.delayMs) / IN_FLIGHT;
  return {
    exit: code,
    calls,
    wall_ms: round(wallMs, 0),
    calls_per_sec: round(calls / (wallMs / 1000), 0),
    ...(s.delayMs > 0 ? { wall_over_ideal: round(wallMs / idealMs, 3) } : {}),
    peak_rss_mb: round(peakKb / 1024, 1),
  };
}

/** Resident KB of a process and its descendants (Linux /proc). */
function treeRssKb(pid: number): number {
  let total = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop()!;
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim();
      if (children) stack.push(...children.split(/\s+/).map(Number));
    } catch {
      // The process ended between two reads.
    }
  }
  return total;
}

async function main(): Promise<void> {
  initTelemetry({ defaultLevel: 'warn' });
  const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-router-'));
  const out: Record<string, unknown> = {};
  const promptfoo = process.env.PROMPTFOO_BIN;
  try {
    for (const s of SCENARIOS) {
      const server = await startServer(s.delayMs);
      try {
        const floor = await rawHttpFloor(server.url, s.delayMs > 0 ? 400 : s.vignettes * s.models.length * s.epochs, s.delayMs);
        out[s.name] = { panoptes: await runPanoptes(s, server.url, dir), machine_floor: floor };
        if (promptfoo) (out[s.name] as Record<string, unknown>).promptfoo = await runPromptfoo(promptfoo, s, server.url, dir);
      } finally {
        server.child.kill();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    JSON.stringify({
      ...out,
      panoptes_peak_rss_mb: round(peakRssMb(), 1),
      in_flight: IN_FLIGHT,
      promptfoo: promptfoo ? 'measured' : 'not measured (set PROMPTFOO_BIN)',
      targets: { calls_per_sec_at_0ms: 2000, wall_over_ideal_at_50ms: 1.05, peak_rss_mb: 150 },
    }),
  );
}

if (process.argv[2] === '--serve') serve(Number(process.argv[3] ?? 0));
else await main();
