/**
 * Engine at scale: 100,000 vignettes x 5 models x 2 epochs = 1,000,000 records on the 0 ms mock,
 * 4 calls in flight. Reports peak RSS (target <= 250 MB) and RSS at each tenth of the sweep (it
 * should stay flat), bytes per record excluding prompt and response text, and the time of
 * `usageByModel` over a million records (target < 100 ms).
 * Runs on: Node.
 */
import { join } from 'node:path';
import { databasePath } from '../core/paths.js';
import { benchEngine, fileBytes, peakRssMb, round, rssMb, writeBenchManifest } from './support.js';

const VIGNETTES = Number(process.env.BENCH_SCALE_VIGNETTES ?? 100_000);
const MODELS = ['m1', 'm2', 'm3', 'm4', 'm5'];
const EPOCHS = 2;
const env = benchEngine(Object.fromEntries(MODELS.map((m) => [m, { latencyMs: 0 }])), 4);
const manifest = join(env.dir, 'manifest.jsonl');
await writeBenchManifest(manifest, VIGNETTES);
const total = VIGNETTES * MODELS.length * EPOCHS;

const rssByTenth: number[] = [];
env.engine.service.subscribe((e) => {
  if (e.type !== 'run') return;
  const tenth = Math.floor((e.run.calls / total) * 10);
  while (rssByTenth.length < tenth) rssByTenth.push(round(rssMb(), 1));
});

// RSS sampled every 100 ms while the run is created and swept: the engine's own footprint.
let sweepPeakRss = 0;
const sampler = setInterval(() => (sweepPeakRss = Math.max(sweepPeakRss, rssMb())), 100);
const t0 = performance.now();
const run = await env.engine.service.createRun({ manifestPath: manifest, models: MODELS, epochs: EPOCHS });
const created = performance.now();
const final = await env.engine.scheduler.runToCompletion(run.id);
const t1 = performance.now();
clearInterval(sampler);
// The kernel's high-water mark so far: the sweep plus writing the manifest, before the analysis below.
const peakAfterSweep = peakRssMb();
if (final.status !== 'done') throw new Error(`run ended ${final.status}: ${final.error}`);

const store = env.engine.store;
const timings: number[] = [];
let usage = store.queries.usageByModel();
for (let i = 0; i < 20; i++) {
  const s = performance.now();
  usage = store.queries.usageByModel();
  timings.push(performance.now() - s);
}
timings.sort((a, b) => a - b);
const records = usage.reduce((s, u) => s + u.calls, 0);
if (records !== total) throw new Error(`expected ${total} records, found ${records}`);

store.db.pragma('wal_checkpoint(TRUNCATE)');
// Bytes by table and index (dbstat): the run's own records apart from the router's cache and metrics.
const tableBytes = Object.fromEntries(
  store.db.prepare<[], { name: string; bytes: number }>(`SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name`).all().map((r) => [r.name, r.bytes]),
);
const recordTables = ['responses', 'sqlite_autoindex_responses_1'];
const recordBytes = recordTables.reduce((sum, t) => sum + (tableBytes[t] ?? 0), 0);
const dbPath = databasePath(env.dataDir);
const dbBytes = fileBytes(dbPath) + fileBytes(`${dbPath}-wal`);
const text = store.db
  .prepare<[], { r: number }>(`SELECT SUM(LENGTH(CAST(response AS BLOB))) AS r FROM responses`)
  .get()!;
await env.cleanup();
console.log(
  JSON.stringify({
    scenario: `${VIGNETTES} x ${MODELS.length} x ${EPOCHS}, mock 0 ms, 4 calls in flight`,
    records,
    create_run_ms: round(created - t0, 0),
    sweep_ms: round(t1 - created, 0),
    calls_per_sec: round(records / ((t1 - created) / 1000), 0),
    peak_rss_mb: round(peakAfterSweep, 1),
    sweep_peak_rss_mb_sampled: round(sweepPeakRss, 1),
    peak_rss_mb_with_analysis: round(peakRssMb(), 1),
    rss_mb_by_tenth: rssByTenth,
    db_bytes: dbBytes,
    // A response row and its unique-key entry, less the response text itself.
    record_bytes_excluding_text: round((recordBytes - text.r) / records, 1),
    // Everything in the file per record: vignettes, jobs, and the router's prompt cache (which
    // keeps each response again) and per-call metrics.
    db_bytes_per_record_all_tables: round(dbBytes / records, 1),
    bytes_by_table_mb: Object.fromEntries(Object.entries(tableBytes).filter(([, b]) => b > 1e6).map(([t, b]) => [t, round(b / 1e6, 1)])),
    usage_by_model_ms_median: round(timings[10]!, 3),
    usage_by_model_ms_max: round(timings[19]!, 3),
    target_peak_rss_mb: 250,
    target_usage_by_model_ms: 100,
  }),
);
