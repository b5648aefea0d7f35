/**
 * The renderer's shared state (zustand), fed by pushed events: run summaries and their usage,
 * each run's scoring progress, workers, the event stream's connection, and the open run's job
 * table. Events are applied in batches (one per animation frame, see render-coalescer.ts), each
 * batch as one state update. Views fetch once when they open and after a reconnect; nothing polls.
 * Runs on: renderer.
 */
import { create } from 'zustand';
import type { ConnectionState } from '../api/client.js';
import type { ControlEvent, Job, ModelCost, RunDetail, RunSummary, ScoringStatus, WorkerInfo } from '../api/types.js';
import { isTerminal, runIsNotOlder } from './freshness.js';
import { JobTable } from './job-table.js';
import { RateMeter } from './rate-meter.js';
import { withScoringCosts } from './run-scoring-costs.js';

export interface OpenRun {
  runId: string;
  /** Null until the run's jobs have been fetched. */
  table: JobTable | null;
  /** Job updates that arrived before the fetch answered; applied on top of it. */
  early: Job[];
  /** Changes whenever the table does (the table itself is mutated in place). */
  version: number;
  meter: RateMeter;
}

export interface AppState {
  runs: Record<string, RunSummary>;
  runsLoaded: boolean;
  usage: Record<string, ModelCost[]>;
  workers: WorkerInfo[] | null;
  connection: ConnectionState;
  /** Changes after the event stream reconnects: views fetch again, since events may have been missed. */
  resync: number;
  /** Changes whenever some run reaches its end (views showing totals over all runs fetch again). */
  settled: number;
  openRun: OpenRun | null;
  /** Each run's latest scoring progress, as pushed (the Results view fetches its report again when it changes). */
  scoring: Record<string, ScoringStatus>;
}

export const useAppStore = create<AppState>()(() => ({
  runs: {},
  runsLoaded: false,
  usage: {},
  workers: null,
  connection: 'connecting',
  resync: 0,
  settled: 0,
  openRun: null,
  scoring: {},
}));

const { getState: get, setState: set } = useAppStore;

/** Runs newest first. */
export function sortRuns(runs: Record<string, RunSummary>): RunSummary[] {
  return Object.values(runs).sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
}

function mergeRuns(list: readonly RunSummary[]): Record<string, RunSummary> {
  const runs = { ...get().runs };
  for (const run of list) {
    const current = runs[run.id];
    if (!current || runIsNotOlder(run, current)) runs[run.id] = run;
  }
  return runs;
}

export function loadedRuns(list: readonly RunSummary[]): void {
  set({ runs: mergeRuns(list), runsLoaded: true });
}

export function upsertRun(run: RunSummary): void {
  set({ runs: mergeRuns([run]) });
}

/** Drops a deleted run from every list. */
export function forgetRun(runId: string): void {
  const runs = { ...get().runs };
  delete runs[runId];
  set({ runs });
}

export function setWorkers(workers: WorkerInfo[]): void {
  set({ workers });
}

export function setConnection(state: ConnectionState): void {
  const previous = get().connection;
  set(state === 'open' && (previous === 'reconnecting' || previous === 'unauthorized') ? { connection: state, resync: get().resync + 1 } : { connection: state });
}

/** Starts collecting a run's job updates; call before fetching it, so nothing is missed in between. */
export function openRun(runId: string): void {
  if (get().openRun?.runId === runId) return;
  set({ openRun: { runId, table: null, early: [], version: 0, meter: new RateMeter() } });
}

export function closeRun(runId: string): void {
  if (get().openRun?.runId === runId) set({ openRun: null });
}

/** Builds the open run's job table from a fetch, then applies whatever arrived meanwhile. */
export function loadedRun(detail: RunDetail): void {
  const open = get().openRun;
  const runs = mergeRuns([detail.run]);
  const usage = { ...get().usage, [detail.run.id]: detail.usage };
  if (!open || open.runId !== detail.run.id) {
    set({ runs, usage });
    return;
  }
  const table = new JobTable(detail.run.models, detail.run.epochs, detail.jobs);
  for (const job of open.early) table.apply(job);
  open.meter.add(Date.now(), runs[detail.run.id]!.calls);
  set({ runs, usage, openRun: { ...open, table, early: [], version: open.version + 1 } });
}

/** A run's scoring progress as fetched or as a scoreRun answered; a pushed one may already be newer. */
export function loadedScoring(status: ScoringStatus): void {
  const current = get().scoring[status.runId];
  if (current && scoredCount(current) > scoredCount(status)) return;
  set({ scoring: { ...get().scoring, [status.runId]: status } });
}

/** Scores settled so far (done or failed): it only grows while a scorer version exists. */
export function scoredCount(status: ScoringStatus): number {
  return status.scorers.reduce((n, s) => n + s.done + s.failed, 0);
}

/** Applies a batch of pushed events as one state update. */
export function ingest(events: readonly ControlEvent[]): void {
  const state = get();
  const now = Date.now();
  let runs: Record<string, RunSummary> | null = null;
  let usage: Record<string, ModelCost[]> | null = null;
  let workers = state.workers;
  let scoring: Record<string, ScoringStatus> | null = null;
  let settled = state.settled;
  let tableChanged = false;
  const open = state.openRun;
  for (const event of events) {
    if (event.type === 'workers') {
      workers = event.workers;
      continue;
    }
    if (event.type === 'scoring') {
      scoring ??= { ...state.scoring };
      scoring[event.status.runId] = event.status;
      const scored = (runs ?? state.runs)[event.status.runId];
      if (scored) (runs ??= { ...state.runs })[scored.id] = withScoringCosts(scored, event.status);
      continue;
    }
    const { run } = event;
    const current = (runs ?? state.runs)[run.id];
    if (open && open.runId === run.id && open.table && current && run.restarts > current.restarts) {
      // Retried, resumed or taken over: its jobs start again from pending, older-looking than the
      // ended states the table holds. The view fetches them again; until then, updates wait.
      open.table = null;
      open.early = [];
      tableChanged = true;
    }
    if (!current || runIsNotOlder(run, current)) {
      runs ??= { ...state.runs };
      runs[run.id] = run;
      usage ??= { ...state.usage };
      usage[run.id] = event.usage;
      if (isTerminal(run.status) && !(current && isTerminal(current.status))) settled += 1;
    }
    if (open && open.runId === run.id) {
      open.meter.add(now, (runs ?? state.runs)[run.id]!.calls);
      if (open.table) {
        for (const job of event.jobs) tableChanged = open.table.apply(job) || tableChanged;
      } else {
        open.early.push(...event.jobs);
      }
    }
  }
  const next: Partial<AppState> = { workers, settled };
  if (runs) next.runs = runs;
  if (usage) next.usage = usage;
  if (scoring) next.scoring = scoring;
  if (open && tableChanged) next.openRun = { ...open, version: open.version + 1 };
  set(next);
}
