/**
 * The router side by side with promptfoo (issue 6): the full engine sweeping through the router's
 * `openai` provider to a fake OpenAI-compatible server in a separate process on 127.0.0.1, at most
 * 4 calls in flight, caching off (skipPromptCache), SQLite and responses.jsonl written.
 *   A: 2,000 vignettes x 2 models x 1 epoch, server answers at once  -> calls/s   (target >= 2,000)
 *   B:   200 vignettes x 2 models x 3 epochs, server answers in 50 ms -> wall / ideal (target <= 1.05)
 * Ideal wall time for B: calls x 50 ms / 4 in flight. Peak RSS (target < 150 MB): see below.
 *
 * How it is measured, like the engine's own throughput benchmark: A runs once to warm up (JIT,
 * sockets, the SDK's first load), then three times with fresh prompts; `calls_per_sec` is the best
 * of those three, `all_calls_per_sec` lists them and `first_sweep_calls_per_sec` is the cold first
 * sweep of a fresh process, reported apart and not hidden. B runs once, after A. Peak RSS
 * (`panoptes_peak_rss_mb`) is that of a fresh process sweeping A once and B once, the work promptfoo
 * is measured on; the same process's figure after the warm-up and repeated sweeps is reported too.
 * The fake server holds each answer for the scenario's delay measured from the request's arrival,
 * and its holds average that delay: a bare 50 ms timer fires ~1 ms late on Node, and even a timer
 * finished by turns of the loop overshoots by 0.2-0.4 ms on a loaded 2-core box, which would charge
 * the server's own lateness to the client; the server takes each overshoot off the answers after
 * it (at most 1 ms early) and reports the hold it actually gave (`server_mean_hold_ms`). For scale, two floor clients make the same calls against the same
 * server: `machine_floor`, a bare node:http client, what no client can beat on this machine at this
 * moment; `sdk_floor`, the openai SDK alone on the provider's transport with no engine around it,
 * what the SDK the provider is built on costs by itself. With PROMPTFOO_BIN set (a promptfoo 0.123
 * installed outside the project; it needs Node >= 22.22), the same work is run once through
 * `promptfoo eval` against the same server for comparison; otherwise only Panoptes.
 * `node router.bench.js --serve DELAY_MS` is the fake server itself (the child process).
 * Runs on: Node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http, { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { nodeFetch } from '../core/models/providers/http-transport.js';
import { openEngine, type Engine } from '../core/service/engine.js';
import { initTelemetry } from '../core/telemetry.js';
import { round, writeBenchManifest } from './support.js';

interface Scenario {
  name: string;
  vignettes: number;
  models: string[];
  epochs: number;
  delayMs: number;
  /** Sweeps measured after the first; the figure is the best of them (0: the first sweep is the figure). */
  warmRounds: number;
}

const SCENARIOS: Scenario[] = [
  { name: '2000 x 2 x 1 at 0 ms', vignettes: 2000, models: ['bench-a', 'bench-b'], epochs: 1, delayMs: 0, warmRounds: 3 },
  { name: '200 x 2 x 3 at 50 ms', vignettes: 200, models: ['bench-a', 'bench-b'], epochs: 3, delayMs: 50, warmRounds: 0 },
];
const IN_FLIGHT = 4;
/** The fake server's correction of its own lateness: a tenth of each answer's overshoot, at most 1 ms early. */
const LEAD_GAIN = 0.1;
const MAX_LEAD_MS = 1;

/** The fake provider: answers chat completions like OpenAI, `delayMs` after each request arrived. */
function serve(delayMs: number): void {
  let n = 0;
  let holdTotalMs = 0;
  // How much before the delay an answer is due: the overshoot of the answers before it (the loop's
  // last turn, a late wake-up on a loaded box) taken off the next, so the holds average the delay
  // itself, as a provider's latency would, whatever load the client puts on the machine.
  let leadMs = 0;
  const server = createServer((req, res) => {
    if (req.url === '/stats') {
      res.end(JSON.stringify({ answered: n, hold_total_ms: holdTotalMs }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrived = performance.now();
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
        const held = performance.now() - arrived;
        holdTotalMs += held;
        if (delayMs > 0) leadMs = Math.min(MAX_LEAD_MS, Math.max(0, leadMs + LEAD_GAIN * (held - delayMs)));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      };
      // A timer a little short of the delay, then turns of the loop (I/O still served) to the time due.
      const due = delayMs - leadMs;
      const finish = () => (performance.now() - arrived >= due ? send() : setImmediate(finish));
      if (delayMs > 0) setTimeout(finish, Math.max(0, due - 2));
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

/** What a client's measurement reports: its wall time and figures of its own. */
type Measured = { wall_ms: number } & Record<string, unknown>;

/** One call of a floor client; resolves once the whole answer is read. */
type Post = () => Promise<unknown>;

/** A bare node:http keep-alive client: what no client beats on this machine at this moment. */
function bareHttpPost(url: string): { post: Post; close: () => void } {
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
  return { post, close: () => agent.destroy() };
}

/**
 * The openai SDK alone, configured as the `openai` provider configures it (retries off, the same
 * keep-alive transport), with no engine around it: the part of the per-call cost that comes with
 * the SDK the provider is built on.
 */
async function sdkPost(url: string): Promise<{ post: Post; close: () => void }> {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey: 'bench', baseURL: `${url}/v1`, maxRetries: 0, timeout: 30_000, fetch: nodeFetch });
  let n = 0;
  return { post: () => client.chat.completions.create({ model: 'floor', messages: [{ role: 'user', content: `floor ${n++}` }] }), close: () => undefined };
}

/**
 * A floor client doing the scenario's calls, 4 in flight, measured like Panoptes (a warm-up, then
 * the best of `warmRounds`). Timers and scheduling on a loaded 2-core box add milliseconds per call
 * on their own; the floors show how much of a figure is the machine's and the SDK's.
 */
async function floor(client: { post: Post; close: () => void }, calls: number, delayMs: number, warmRounds: number): Promise<Measured> {
  const walls: number[] = [];
  for (let round = 0; round <= warmRounds; round++) {
    let started = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (started < calls) {
          started += 1;
          await client.post();
        }
      }),
    );
    walls.push(performance.now() - t0);
  }
  client.close();
  const wallMs = Math.min(...(warmRounds > 0 ? walls.slice(1) : walls));
  return delayMs > 0
    ? { calls, wall_ms: round(wallMs, 0), wall_over_ideal: round(wallMs / ((calls * delayMs) / IN_FLIGHT), 3) }
    : { calls, wall_ms: round(wallMs, 0), calls_per_sec: round(calls / (wallMs / 1000), 0) };
}

/** Peak RSS of this process (kernel high-water mark), MB. */
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

interface ServerStats {
  answered: number;
  hold_total_ms: number;
}

async function serverStats(url: string): Promise<ServerStats> {
  return (await (await fetch(`${url}/stats`)).json()) as ServerStats;
}

/**
 * Runs one client's measurement and adds the hold the server gave meanwhile; at a delay, also the
 * wall time over the ideal at that hold (calls x mean hold / 4): the part of the excess that is the
 * client's and not the fake server's own lateness (a loaded 2-core box wakes it up to a few ms late
 * now and then).
 */
async function withServerHold(url: string, s: Scenario, measure: () => Promise<Measured>): Promise<Measured> {
  const before = await serverStats(url);
  const m = await measure();
  const after = await serverStats(url);
  const hold = (after.hold_total_ms - before.hold_total_ms) / (after.answered - before.answered);
  const calls = s.vignettes * s.models.length * s.epochs;
  return {
    ...m,
    server_mean_hold_ms: round(hold, 3),
    ...(s.delayMs > 0 ? { wall_over_held_ideal: round(m.wall_ms / ((calls * hold) / IN_FLIGHT), 3) } : {}),
  };
}

/** One sweep of the scenario through a fresh run: wall time from createRun to done, records checked. */
async function sweep(engine: Engine, s: Scenario, manifest: string): Promise<{ wallMs: number; runMs: number }> {
  const calls = s.vignettes * s.models.length * s.epochs;
  const t0 = performance.now();
  const run = await engine.service.createRun({ manifestPath: manifest, models: s.models, epochs: s.epochs, skipPromptCache: true });
  const t1 = performance.now();
  const final = await engine.scheduler.runToCompletion(run.id);
  const wallMs = performance.now() - t0;
  const runMs = performance.now() - t1;
  if (final.status !== 'done') throw new Error(`run ended ${final.status}: ${final.error}`);
  const lines = readFileSync(join(engine.dataDir, 'runs', run.id, 'responses.jsonl'), 'utf8').trim().split('\n').length;
  if (lines !== calls || engine.store.queries.responseCount(run.id) !== calls) throw new Error(`expected ${calls} records, got ${lines}`);
  return { wallMs, runMs };
}

async function runPanoptes(s: Scenario, url: string, dir: string): Promise<Measured> {
  const engine = openEngine({ dataDir: join(dir, `data-${s.delayMs}`), catalogPaths: [writeCatalog(dir, url, s.models)], callConcurrency: IN_FLIGHT });
  try {
    const calls = s.vignettes * s.models.length * s.epochs;
    const cps = (ms: number) => round(calls / (ms / 1000), 0);
    const sweeps: Array<{ wallMs: number; runMs: number }> = [];
    for (let i = 0; i <= s.warmRounds; i++) {
      // Fresh prompts each round, as a new sweep would bring.
      const manifest = join(dir, `manifest-${s.delayMs}-${i}.jsonl`);
      await writeBenchManifest(manifest, s.vignettes, ` (round ${i})`);
      sweeps.push(await sweep(engine, s, manifest));
    }
    const measured = s.warmRounds > 0 ? sweeps.slice(1) : sweeps;
    const best = measured.reduce((a, b) => (b.wallMs < a.wallMs ? b : a));
    const idealMs = (calls * s.delayMs) / IN_FLIGHT;
    return {
      calls,
      wall_ms: round(best.wallMs, 0),
      calls_per_sec: cps(best.wallMs),
      // Without reading and staging the manifest (createRun): the calls alone.
      run_only_calls_per_sec: cps(best.runMs),
      ...(s.warmRounds > 0 ? { all_calls_per_sec: measured.map((m) => cps(m.wallMs)), first_sweep_calls_per_sec: cps(sweeps[0]!.wallMs) } : {}),
      ...(s.delayMs > 0 ? { ideal_ms: idealMs, wall_over_ideal: round(best.wallMs / idealMs, 3) } : {}),
    };
  } finally {
    await engine.close();
  }
}

/** The same work through promptfoo (when PROMPTFOO_BIN points at one): wall time and its peak RSS. */
async function runPromptfoo(bin: string, s: Scenario, url: string, dir: string): Promise<Measured> {
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

/**
 * Peak RSS measured the way promptfoo's is: a fresh process doing the compared work once (one sweep
 * of A, then one of B) and nothing else. The in-process figure after the warm-up and repeated
 * sweeps is reported apart.
 */
async function freshProcess(urls: string[], dir: string): Promise<Record<string, unknown>> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--once', dir, ...urls], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  let last = '';
  for await (const line of lines) last = line;
  const [code] = child.exitCode === null ? ((await once(child, 'exit')) as [number]) : [child.exitCode];
  if (code !== 0) throw new Error(`the fresh Panoptes process exited ${code}`);
  return JSON.parse(last) as Record<string, unknown>;
}

/** The child of `freshProcess`: each scenario swept once, then this process's peak RSS. */
async function runOnce(dir: string, urls: string[]): Promise<void> {
  initTelemetry({ defaultLevel: 'warn' });
  const out: Record<string, unknown> = {};
  for (const [i, s] of SCENARIOS.entries()) out[s.name] = await runPanoptes({ ...s, warmRounds: 0 }, urls[i]!, dir);
  console.log(JSON.stringify({ ...out, peak_rss_mb: round(peakRssMb(), 1) }));
}

async function main(): Promise<void> {
  initTelemetry({ defaultLevel: 'warn' });
  const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-router-'));
  const out: Record<string, Record<string, unknown>> = {};
  const promptfoo = process.env.PROMPTFOO_BIN;
  const servers = await Promise.all(SCENARIOS.map((s) => startServer(s.delayMs)));
  let fresh: Record<string, unknown>;
  try {
    for (const [i, s] of SCENARIOS.entries()) {
      const url = servers[i]!.url;
      const calls = s.vignettes * s.models.length * s.epochs;
      out[s.name] = {
        panoptes: await withServerHold(url, s, () => runPanoptes(s, url, dir)),
        machine_floor: await withServerHold(url, s, async () => floor(bareHttpPost(url), calls, s.delayMs, s.warmRounds)),
        sdk_floor: await withServerHold(url, s, async () => floor(await sdkPost(url), calls, s.delayMs, s.warmRounds)),
      };
    }
    const freshDir = join(dir, 'fresh');
    mkdirSync(freshDir);
    fresh = await freshProcess(servers.map((s) => s.url), freshDir);
    if (promptfoo) {
      for (const [i, s] of SCENARIOS.entries()) {
        const url = servers[i]!.url;
        out[s.name]!.promptfoo = await withServerHold(url, s, () => runPromptfoo(promptfoo, s, url, dir));
      }
    }
  } finally {
    for (const server of servers) server.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    JSON.stringify({
      ...out,
      panoptes_peak_rss_mb: fresh.peak_rss_mb,
      panoptes_fresh_process: fresh,
      panoptes_peak_rss_mb_after_warm_rounds: round(peakRssMb(), 1),
      in_flight: IN_FLIGHT,
      promptfoo: promptfoo ? 'measured' : 'not measured (set PROMPTFOO_BIN)',
      targets: { calls_per_sec_at_0ms: 2000, wall_over_ideal_at_50ms: 1.05, peak_rss_mb: 150 },
    }),
  );
}

if (process.argv[2] === '--serve') serve(Number(process.argv[3] ?? 0));
else if (process.argv[2] === '--once') await runOnce(process.argv[3]!, process.argv.slice(4));
else await main();
