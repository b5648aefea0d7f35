/**
 * `npm run bench -- verdict-simulation`: do the report's verdicts and intervals hold up? Simulated
 * sweeps with known truths, each reported by the real report builder (buildScoreReport), for every
 * design of: equal models (four at accuracy 0.7: any "better" is false) or 0.8 against 0.6 (two
 * models); n = 10, 24, 60 vignettes; K = 1 or 3 epochs; vignettes independent or in clusters. Each
 * vignette has a difficulty shared by the models (logit shift ~ N(0, 1)); a clustered design adds a
 * cluster's shift (~ N(0, 0.7)) over clusters of 5 vignettes (two at n = 10, and five of 2), or at
 * n = 60 over one cluster of 54 and three of 2, and is reported with `by` the cluster. The truth is each model's population mean, E[expit(logit p + shift)].
 * Prints, per design: the familywise false-"better" rate (equal models; target ≤ 5 %), the share of
 * sweeps that find the 0.8 model better (power), and the coverage of every interval shown: each
 * model's mean and each pair's difference (target 93-97 % at n ≥ 10). Then the demo's design: its
 * four mocks (0.8, 0.6 and two that never hit the target) at its size, the share of draws that find
 * mock-strong better than mock-weak after Holm over its six pairs (target > 95 %).
 * Each rate comes with its Monte Carlo 95 % interval (Wilson over the sweeps), so a figure is read
 * against its target with the simulation's own error. Intervals the report refuses to give (a
 * clustering with too few clusters) are counted apart and are not coverage misses.
 * SWEEPS sweeps per design (default 20,000, a Monte Carlo error of about ±0.3 points on a 5 % rate:
 * `SWEEPS=1000 npm run bench -- verdict-simulation` for a quick look);
 * ONLY=text runs only the designs whose name holds it (each keeps its seed).
 * Runs on: Node.
 */
import { answersTarget } from '../core/models/providers/known-accuracy.js';
import { buildScoreReport, type ScoreCell } from '../core/scoring/report.js';
import type { ScoreReport } from '../core/scoring/report-shape.js';
import { wilsonInterval } from '../core/scoring/proportion-intervals.js';
import { round } from './support.js';

const SWEEPS = Number(process.env['SWEEPS'] ?? 20000);
const ONLY = process.env['ONLY'];
const VIGNETTE_SD = 1;
const CLUSTER_SD = 0.7;
const CLUSTER_SIZE = 5;
/** The demo's size: `npm run demo` runs examples/demo-manifest.jsonl at this many epochs. */
const DEMO_VIGNETTES = 24;
const DEMO_EPOCHS = 10;

/** mulberry32: a small seeded generator, so every run of the simulation prints the same figures. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(u: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

const logit = (p: number) => Math.log(p / (1 - p));
const expit = (x: number) => 1 / (1 + Math.exp(-x));

/** E[expit(logit p + sd · Z)], by the trapezoid rule over ±10 sd (exact to ~1e-10 here). */
function populationMean(p: number, sd: number): number {
  const steps = 4000;
  let sum = 0;
  for (let i = 0; i <= steps; i++) {
    const z = -10 + (20 * i) / steps;
    const w = i === 0 || i === steps ? 0.5 : 1;
    sum += w * expit(logit(p) + sd * z) * Math.exp(-z * z / 2);
  }
  return (sum * (20 / steps)) / Math.sqrt(2 * Math.PI);
}

interface Design {
  name: string;
  accuracies: number[];
  n: number;
  epochs: number;
  clustered: boolean;
  /** Clustered: one cluster holds 90 % of the vignettes, the rest come in pairs (too few clusters: refused). */
  dominant?: boolean;
  /** Clustered: vignettes a cluster, instead of 5 (or n / 2 at n = 10, two clusters: refused). */
  clusterSize?: number;
}

function clusterOf(design: Design, v: number): number {
  if (design.dominant === true) {
    const big = Math.round(0.9 * design.n);
    return v < big ? 0 : 1 + Math.floor((v - big) / 2);
  }
  const size = design.clusterSize ?? (design.n <= 10 ? design.n / 2 : CLUSTER_SIZE);
  return Math.floor(v / size);
}

function sweepCells(design: Design, u: () => number): ScoreCell[] {
  const cells: ScoreCell[] = [];
  const clusterShift = new Map<number, number>();
  for (let v = 0; v < design.n; v++) {
    const c = clusterOf(design, v);
    if (design.clustered && !clusterShift.has(c)) clusterShift.set(c, CLUSTER_SD * normal(u));
    const shift = VIGNETTE_SD * normal(u) + (design.clustered ? clusterShift.get(c)! : 0);
    design.accuracies.forEach((p, m) => {
      const q = expit(logit(p) + shift);
      for (let e = 1; e <= design.epochs; e++) {
        const hit = u() < q;
        cells.push({ model: `m${m}`, vignetteId: `v${v}`, epoch: e, value: hit ? 1 : 0, passed: hit, group: design.clustered ? `c${c}` : null });
      }
    });
  }
  return cells;
}

const covers = (ci: [number, number] | null, truth: number) => ci !== null && ci[0] <= truth && truth <= ci[1];

async function simulate(design: Design, seed: number) {
  const u = generator(seed);
  const sd = design.clustered ? Math.hypot(VIGNETTE_SD, CLUSTER_SD) : VIGNETTE_SD;
  const truth = design.accuracies.map((p) => populationMean(p, sd));
  let anyBetter = 0;
  let firstBetter = 0;
  let meanCovered = 0;
  let meanShown = 0;
  let pairCovered = 0;
  let pairShown = 0;
  let noInterval = 0;
  let refused = 0;
  for (let s = 0; s < SWEEPS; s++) {
    const report: ScoreReport = await buildScoreReport(
      { runId: `sim-${s}`, scorer: 'sim', scorerVersion: 'sim', kind: 'pass_fail', epochs: design.epochs, by: design.clustered ? 'cluster' : null },
      sweepCells(design, u),
    );
    if (report.pairs.some((p) => p.distinguishable)) anyBetter++;
    const first = report.pairs.find((p) => p.a === 'm0' && p.b === 'm1');
    if (first?.verdict === 'a_better') firstBetter++;
    for (const m of report.models) {
      // A clustered mean without an interval is one the report refused: too few clusters.
      if (m.ci95 === null && m.ci_method === 'cr2') {
        refused++;
        continue;
      }
      meanShown++;
      if (covers(m.ci95, truth[Number(m.model.slice(1))]!)) meanCovered++;
    }
    for (const p of report.pairs) {
      if (p.verdict === 'too_few_clusters') {
        refused++;
        continue;
      }
      pairShown++;
      if (p.ci95 === null) noInterval++;
      if (covers(p.ci95, truth[Number(p.a.slice(1))]! - truth[Number(p.b.slice(1))]!)) pairCovered++;
    }
  }
  const equal = design.accuracies.every((p) => p === design.accuracies[0]);
  return {
    design: design.name,
    sweeps: SWEEPS,
    ...(equal ? { familywise_false_better: rate(anyBetter, SWEEPS) } : { found_better: rate(firstBetter, SWEEPS) }),
    mean_coverage: rate(meanCovered, meanShown),
    pair_coverage: rate(pairCovered, pairShown),
    pairs_without_interval: noInterval,
    intervals_refused: refused,
  };
}

/** A share with its Monte Carlo 95 % interval; null when nothing was counted (every interval refused). */
function rate(hits: number, of: number): { value: number; mc95: [number, number] } | null {
  if (of === 0) return null;
  const [lo, hi] = wilsonInterval(hits, of)!;
  return { value: round(hits / of, 4), mc95: [round(lo, 4), round(hi, 4)] };
}

/** The demo: its four mocks, hits decided by the known-accuracy hash as the mock provider decides them, on fresh vignette ids per draw. */
async function demoDraws() {
  const mocks = [
    { model: 'mock-strong', accuracy: 0.8 },
    { model: 'mock-weak', accuracy: 0.6 },
    { model: 'mock-fast', accuracy: 0 },
    { model: 'mock-flaky', accuracy: 0 },
  ];
  const result: Record<string, number> = {};
  for (const epochs of [3, DEMO_EPOCHS]) {
    let found = 0;
    for (let s = 0; s < SWEEPS; s++) {
      const cells: ScoreCell[] = [];
      for (let v = 0; v < DEMO_VIGNETTES; v++) {
        for (let e = 1; e <= epochs; e++) {
          for (const m of mocks) {
            const hit = m.accuracy > 0 && answersTarget(m.model, `demo-${s}-v${v}`, e, m.accuracy);
            cells.push({ model: m.model, vignetteId: `demo-${s}-v${v}`, epoch: e, value: hit ? 1 : 0, passed: hit });
          }
        }
      }
      const report = await buildScoreReport({ runId: `demo-${s}`, scorer: 'exact', scorerVersion: 'sim', kind: 'pass_fail', epochs }, cells);
      if (report.pairs.find((p) => p.a === 'mock-strong' && p.b === 'mock-weak')?.verdict === 'a_better') found++;
    }
    result[`${DEMO_VIGNETTES}x${epochs}`] = round(found / SWEEPS, 4);
  }
  return result;
}

const MODEL_SETS = [
  ['equal (4 x 0.7)', [0.7, 0.7, 0.7, 0.7]],
  ['0.8 vs 0.6', [0.8, 0.6]],
] as const;
const designs: Design[] = [];
for (const [label, accuracies] of MODEL_SETS) {
  for (const clustered of [false, true]) {
    for (const epochs of [1, 3]) {
      for (const n of [10, 24, 60]) {
        designs.push({ name: `${label}, n ${n}, K ${epochs}${clustered ? ', clustered' : ''}`, accuracies: [...accuracies], n, epochs, clustered });
      }
    }
  }
}
// After the others, so their seeds (by position) stay those of earlier runs.
for (const [label, accuracies] of MODEL_SETS) {
  for (const epochs of [1, 3]) {
    designs.push({ name: `${label}, n 60, K ${epochs}, one cluster of 54`, accuracies: [...accuracies], n: 60, epochs, clustered: true, dominant: true });
  }
}
for (const [label, accuracies] of MODEL_SETS) {
  for (const epochs of [1, 3]) {
    designs.push({ name: `${label}, n 10, K ${epochs}, 5 clusters of 2`, accuracies: [...accuracies], n: 10, epochs, clustered: true, clusterSize: 2 });
  }
}

const started = performance.now();
const results = [];
for (const [i, d] of designs.entries()) {
  if (ONLY !== undefined && !d.name.includes(ONLY)) continue;
  const r = await simulate(d, 20261201 + i);
  process.stderr.write(`${JSON.stringify(r)}\n`);
  results.push(r);
}
const demo = ONLY === undefined ? await demoDraws() : null;
process.stderr.write(`demo: ${JSON.stringify(demo)}\n`);
process.stdout.write(`${JSON.stringify({ sweeps_per_design: SWEEPS, designs: results, demo_found_strong_better: demo, seconds: round((performance.now() - started) / 1000, 1) })}\n`);
