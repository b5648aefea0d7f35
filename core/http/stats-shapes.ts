/**
 * The accounting answers in the original accounting's snake_case shapes. `GET /stats` is exactly that
 * `{"models":[{"model","input_tokens","output_tokens","calls","est_cost_usd"}],"total_est_cost_usd"}`
 * and nothing more (its schema, in stats-schema.ts, doubles as the route's response schema, so an
 * extra field cannot slip out); `GET /runs/:id/stats` is the same per-model shape for one run, with progress, rates,
 * what the prompt cache answered, the sweep's calls asked of billing providers (`calls_asked`,
 * `calls_unrecorded`), and the calls that retried hard fails, apart.
 * Runs on: Node (core).
 */
import type { JobStatus } from '../domain.js';
import type { ModelCost, RunDetail, StatsReport } from '../service/contract.js';
import type { ModelStats, StatsShape } from './stats-schema.js';

export function toModelStats(m: ModelCost): ModelStats {
  return {
    model: m.model,
    input_tokens: m.inputTokens,
    output_tokens: m.outputTokens,
    calls: m.calls,
    est_cost_usd: m.estCostUsd,
  };
}

/**
 * What the prompt cache answered, in the same snake_case: the calls, the tokens those answers carry
 * (not billed, so not in input_tokens/output_tokens) and what they would have cost. Per-run answers
 * carry it; `/stats` does not, so its shape stays exactly the original one.
 */
export function toCacheStats(u: Pick<ModelCost, 'cachedCalls' | 'cachedInputTokens' | 'cachedOutputTokens' | 'savedCostUsd'>) {
  return {
    cached_calls: u.cachedCalls,
    cached_input_tokens: u.cachedInputTokens,
    cached_output_tokens: u.cachedOutputTokens,
    saved_cost_usd: u.savedCostUsd,
  };
}

/** The /stats answer, models sorted by name. */
export function toStatsShape(report: StatsReport): StatsShape {
  const models = report.models.map(toModelStats).sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
  return { models, total_est_cost_usd: report.totalEstCostUsd };
}

const JOB_STATUSES: readonly JobStatus[] = ['pending', 'running', 'done', 'failed', 'cancelled'];

/**
 * The candidate models' calls that retried hard fails (a scorer's retryOnHardFail), in the /stats
 * per-model shape: extra calls, apart from the sweep's, so the sweep's figures stay what it planned.
 */
export function toRetryStats(retries: readonly ModelCost[]) {
  return { models: retries.map(toModelStats), total_est_cost_usd: retries.reduce((s, m) => s + m.estCostUsd, 0) };
}

/**
 * One run's accounting: the /stats per-model figures plus each model's job progress, the run's
 * rate, its retries and its judges' calls apart, and what it cost in all (`total_with_scoring_usd`).
 */
export function toRunStats(
  detail: RunDetail,
  scoring: Pick<StatsReport, 'retries' | 'judges' | 'totalWithScoringUsd' | 'totalSweepCallsAsked' | 'totalSweepCallsUnrecorded'>,
  now = Date.now(),
) {
  const { run, jobs } = detail;
  const jobCounts = Object.fromEntries(JOB_STATUSES.map((s) => [s, jobs.filter((j) => j.status === s).length]));
  const elapsedMs = run.startedAt === null ? 0 : (run.finishedAt ?? now) - run.startedAt;
  const models = detail.usage.map((m) => {
    const own = jobs.filter((j) => j.model === m.model);
    return {
      ...toModelStats(m),
      ...toCacheStats(m),
      jobs_total: run.epochs,
      jobs_done: own.filter((j) => j.status === 'done').length,
      jobs_failed: own.filter((j) => j.status === 'failed').length,
      calls_expected: run.epochs * run.vignetteCount,
    };
  });
  return {
    run_id: run.id,
    status: run.status,
    job_count: run.jobCount,
    jobs: jobCounts,
    calls: run.calls,
    calls_expected: run.jobCount * run.vignetteCount,
    // The sweep's calls to providers that bill, counted before each left, and those no record holds.
    calls_asked: scoring.totalSweepCallsAsked,
    calls_unrecorded: scoring.totalSweepCallsUnrecorded,
    input_tokens: run.inputTokens,
    output_tokens: run.outputTokens,
    ...toCacheStats(run),
    elapsed_ms: elapsedMs,
    calls_per_second: elapsedMs > 0 ? Math.round((run.calls / elapsedMs) * 1000 * 100) / 100 : 0,
    models,
    total_est_cost_usd: run.estCostUsd,
    retries: toRetryStats(scoring.retries),
    judges: toRetryStats(scoring.judges),
    total_with_scoring_usd: scoring.totalWithScoringUsd,
  };
}
