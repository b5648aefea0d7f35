/**
 * RunScoring: the scoring side of the ControlService. It attaches scorers to a run (refusing a
 * judge its run's privacy mode could never call) and reads a run's scores back as the report, the
 * comparison of two runs, the vignette x model matrix and one vignette's side-by-side detail. The
 * service checks the runs exist and hands them over; this class trusts them.
 * Runs on: Node (core).
 */
import { PanoptesError, type PrivacyMode, type Run, type RunId } from '../domain.js';
import type { Catalog } from '../models/catalog.js';
import { effectivePrivacy } from '../models/router/privacy.js';
import type { Router } from '../models/router/router.js';
import { diskFullError, isDiskFull } from '../store/disk-full.js';
import type { ScoringConfig } from '../scoring/scoring-config.js';
import { pairwiseBaselineOf } from '../scoring/judge/judge-definition.js';
import type { AdmittedScorers } from '../scoring/scorer-admission.js';
import type { BuiltScorer } from '../scoring/scorer-registry.js';
import { buildRunComparison, buildScoreReport, type ScoreCell } from '../scoring/report.js';
import { reportedKind } from '../scoring/reported-kind.js';
import { buildScoreMatrix } from '../scoring/score-matrix.js';
import { VariantArms } from '../scoring/variant-arms.js';
import type { RecordScore, ReportAttempt, RunScorer } from '../store/score-store.js';
import type { Store } from '../store/store.js';
import { storedStagePrompts, type StagedVignette } from '../workers/stage-prompt.js';
import type { FlippedVignettes, RunComparison, ScoreDetail, ScoreMatrixPage, ScoreReport, ScoringStatus } from './contract.js';
import type { DetailStage } from './contract-scoring.js';
import { flippedVignettes } from './run-flips.js';
import { searchedSource } from './matrix-search.js';
import { VignetteSearch } from '../store/vignette-search.js';
import type { ValidInput } from './contract-dispatcher.js';
import type { EventHub } from './event-hub.js';
import { refuseEmptyTarget } from './empty-targets.js';
import { pendingOf, scoringStatus, type ServiceScoring } from './scoring-status.js';

export interface RunScoringOptions {
  store: Store;
  catalog: Catalog;
  events: EventHub;
  /** Whose privacy lock a strict run's judges obey, and whose hosts' posture says whether a judge can be called at all. */
  router: Pick<Router, 'privacyLock' | 'posture'>;
  scoring: ServiceScoring;
}

/** Rows of the vignette x model matrix a page holds unless asked otherwise. */
const MATRIX_PAGE = 50;

/** A stored score as the side-by-side view shows it. */
function detailScore(sc: RecordScore): ScoreDetail['responses'][number]['scores'][number] {
  return { scorer: sc.scorerName, version: sc.version, value: sc.value, passed: sc.passed, severity: sc.severity, explanation: sc.explanation, judge: sc.judge };
}

export class RunScoring {
  private readonly store: Store;
  private readonly catalogData: Catalog;
  private readonly events: EventHub;
  private readonly router: Pick<Router, 'privacyLock' | 'posture'>;
  private readonly scoring: ServiceScoring;
  private readonly vignettes: VignetteSearch;

  constructor(opts: RunScoringOptions) {
    this.store = opts.store;
    this.catalogData = opts.catalog;
    this.events = opts.events;
    this.router = opts.router;
    this.scoring = opts.scoring;
    this.vignettes = new VignetteSearch(opts.store);
  }

  /** Admits the scorers for the run (built and checked once), attaches them and answers with the run's scoring status. */
  async scoreRun(run: Run, input: ValidInput<'scoreRun'>): Promise<ScoringStatus> {
    const admitted = await this.admit(input.scorers, run.models, run.options.privacy, `run ${run.id}`, async ({ config }) =>
      refuseEmptyTarget(config, this.scoring.scores.firstEmptyTarget(run.id), run.manifestPath),
    );
    this.attach(run, admitted);
    return this.status(input.runId);
  }

  /**
   * A scoring file admitted for a run of these models under this privacy mode: its judges callable,
   * and `also` refused first; what `attach` takes.
   */
  admit(config: ScoringConfig, models: readonly string[], privacy: PrivacyMode, whose: string, also?: (admitted: AdmittedScorers) => Promise<void>): Promise<AdmittedScorers> {
    return this.scoring.admission.admit(config, {
      models,
      whose,
      refuse: async (admitted) => {
        await also?.(admitted);
        this.refuseUncallableJudges(privacy, admitted.built, whose);
      },
    });
  }

  async report(run: Run, input: ValidInput<'report'>): Promise<ScoreReport> {
    const rs = this.scorerOf(run.id, input.scorer);
    const baseline = rs.layer === 'judge' ? pairwiseBaselineOf(rs.definition) : undefined;
    const arms = await this.armsOf(run.id, baseline);
    const cells = this.reportCells(run.id, rs, input.by ?? null, input.attempt ?? 'first');
    const report = await buildScoreReport(
      {
        runId: run.id,
        scorer: rs.name,
        scorerVersion: rs.version,
        kind: reportedKind(rs),
        declaredKind: rs.kind,
        epochs: run.epochs,
        models: arms ? arms.order(run.models) : run.models,
        // Read from the scorer's row: the report needs its counts, not the whole status priced.
        pending: pendingOf(this.store.queries.responseCount(run.id), rs),
        failed: rs.failed,
        failure: rs.failed > 0 ? rs.lastError : null,
        by: input.by ?? null,
        attempt: input.attempt ?? 'first',
        ...(input.reducer ? { reducer: input.reducer } : {}),
        ...(rs.layer === 'judge' ? { pairwiseBaseline: baseline } : {}),
      },
      arms ? arms.cells(cells) : cells,
    );
    return arms ? arms.report(report) : report;
  }

  async compareRuns(a: Run, b: Run, input: ValidInput<'compareRuns'>): Promise<RunComparison> {
    const sa = this.scorerOf(a.id, input.scorer, 'runA');
    const sb = this.scorerOf(b.id, input.scorer ?? sa.name, 'runB');
    const kind = reportedKind(sa);
    if (kind !== reportedKind(sb)) {
      throw new PanoptesError('invalid_input', `scorer ${sa.name} is ${kind} in run ${a.id} and ${reportedKind(sb)} in run ${b.id}`, { where: 'scorer' });
    }
    const armsA = await this.armsOf(a.id, sa.layer === 'judge' ? pairwiseBaselineOf(sa.definition) : undefined);
    const armsB = await this.armsOf(b.id, sb.layer === 'judge' ? pairwiseBaselineOf(sb.definition) : undefined);
    const models = [...a.models, ...b.models.filter((m) => !a.models.includes(m))];
    const ordering = armsA ?? armsB;
    const cellsA = this.reportCells(a.id, sa, null);
    const cellsB = this.reportCells(b.id, sb, null);
    const comparison = await buildRunComparison(
      {
        runA: a.id,
        runB: b.id,
        scorer: sa.name,
        scorerVersionA: sa.version,
        scorerVersionB: sb.version,
        kind,
        epochsA: a.epochs,
        epochsB: b.epochs,
        models: ordering ? ordering.order(models) : models,
        ...(input.reducer ? { reducer: input.reducer } : {}),
      },
      armsA ? armsA.cells(cellsA) : cellsA,
      armsB ? armsB.cells(cellsB) : cellsB,
    );
    return VariantArms.comparison(comparison, armsA, armsB);
  }

  /**
   * A run's prompt variants as report arms, or null to report it by model: fewer than two
   * variants, or a pairwise scorer (its baseline is a model, whose own rows are 0.5 by definition).
   */
  private async armsOf(runId: RunId, pairwiseBaseline: string | undefined): Promise<VariantArms | null> {
    if (pairwiseBaseline !== undefined) return null;
    return VariantArms.read(this.scoring.scores.variants.of(runId));
  }

  /** The vignettes whose verdict flipped from run A to run B, per model, for one pass/fail scorer (run A's name in both). */
  async flippedVignettes(a: Run, b: Run, input: ValidInput<'flippedVignettes'>): Promise<FlippedVignettes> {
    const scorer = this.scorerOf(a.id, input.scorer, 'runA').name;
    this.scorerOf(b.id, scorer, 'runB');
    const page = (run: Run, cursor: number) => this.scoreMatrix(run, { runId: run.id, scorer, sort: 'vignette', limit: 1000, cursor });
    return flippedVignettes(page, a, b, input.limit ?? 200);
  }

  async scoreMatrix(run: Run, input: ValidInput<'scoreMatrix'>): Promise<ScoreMatrixPage> {
    const rs = this.scorerOf(run.id, input.scorer);
    const scores = this.scoring.scores;
    const whole = { scores: (lo: number, hi: number) => scores.matrixScores(run.id, rs.scorerId, lo, hi), heads: (lo: number, hi: number) => scores.vignetteHeads(run.id, lo, hi) };
    const matches = input.search?.trim() ? await this.vignettes.matching(run.id, input.search.trim()) : null;
    return buildScoreMatrix(
      {
        runId: run.id,
        scorer: rs.name,
        scorerVersion: rs.version,
        kind: reportedKind(rs),
        models: run.models,
        epochs: run.epochs,
        vignettes: matches?.length ?? run.vignetteCount,
        judges: rs.judges.length,
        reducer: input.reducer ?? 'mean',
        sort: input.sort ?? 'vignette',
        cursor: input.cursor ?? 0,
        limit: input.limit ?? MATRIX_PAGE,
      },
      matches === null ? whole : searchedSource(whole, matches),
    );
  }

  async scoreDetail(run: Run, input: ValidInput<'scoreDetail'>): Promise<ScoreDetail> {
    const vignette = this.scoring.scores.vignetteById(run.id, input.vignetteId);
    if (!vignette) throw new PanoptesError('not_found', `run ${run.id} has no vignette "${input.vignetteId}"`, { where: 'vignetteId' });
    const responses: ScoreDetail['responses'] = [];
    // One record per (model, epoch): a page of 1,000 holds them all unless the run is very wide.
    for (let cursor: number | null = 0; cursor !== null; ) {
      const page = this.store.queries.responses(run.id, { vignetteId: input.vignetteId }, { limit: 1000, cursor });
      for (const r of page.items) {
        const scores = this.scoring.scores.recordScores(run.id, r.seq).map(detailScore);
        const retries = this.scoring.attempts.recordAttempts(run.id, r.seq).map((a) => ({
          scorer: a.scorerName,
          version: a.version,
          attempt: a.attempt,
          response: a.response,
          scores: a.scores.map(detailScore),
        }));
        const stages = run.options.template ? this.detailStages(run, vignette, r.seq) : undefined;
        responses.push({ model: r.model, epoch: r.epoch, seq: r.seq, response: r.response, scores, retries, ...(stages ? { stages } : {}) });
      }
      cursor = page.nextCursor;
    }
    const order = new Map(run.models.map((m, i) => [m, i]));
    responses.sort((a, b) => (order.get(a.model) ?? 0) - (order.get(b.model) ?? 0) || a.epoch - b.epoch);
    return { runId: run.id, vignette, responses };
  }

  /** A staged record's calls for the side-by-side view, each with the prompt it was posed with. */
  private detailStages(run: Run, vignette: StagedVignette, seq: number): DetailStage[] {
    const calls = this.store.queries.stagesOfRecord(run.id, seq);
    const prompts = storedStagePrompts(run.options.template!, vignette, calls);
    return calls.map((c, i) => ({
      stage: c.stage,
      item: c.item,
      round: c.round,
      prompt: prompts[i]!,
      response: c.response,
      inputTokens: c.usage.inputTokens,
      outputTokens: c.usage.outputTokens,
      latencyMs: c.latencyMs,
    }));
  }

  /** The scorer a report is asked for: by name its newest version, else the run's first scorer. */
  private scorerOf(runId: RunId, name: string | undefined, where = 'runId'): RunScorer {
    const attached = this.scoring.scores.runScorers(runId);
    if (attached.length === 0) {
      throw new PanoptesError('not_found', `run ${runId} has no scorers yet: score it first (panoptes score ${runId} --scorers FILE)`, { where });
    }
    if (name === undefined) return attached[0]!;
    const named = attached.filter((s) => s.name === name);
    if (named.length === 0) {
      const names = [...new Set(attached.map((s) => s.name))].join(', ');
      throw new PanoptesError('not_found', `run ${runId} has no scorer "${name}" (it has: ${names})`, { where: 'scorer' });
    }
    return named[named.length - 1]!;
  }

  /**
   * A scorer's stored scores as the report reads them, a page at a time, giving the event loop a
   * turn between pages: each with its judge's name (the judges' agreement) and whether it is a
   * missing verdict.
   */
  private async *reportCells(runId: RunId, rs: RunScorer, by: string | null, attempt: ReportAttempt = 'first'): AsyncGenerator<ScoreCell[]> {
    const judges = rs.layer === 'judge' ? rs.judges : [];
    for (const page of this.scoring.scores.cells(runId, rs.scorerId, by, attempt)) {
      yield page.map((c) => ({
        model: c.model,
        vignetteId: c.vignetteId,
        epoch: c.epoch,
        value: c.value,
        passed: c.passed,
        group: c.group,
        judge: judges[c.judge] ?? null,
        missing: c.missing,
      }));
      await new Promise<void>((r) => setImmediate(r));
    }
  }

  /** A run's scoring progress. */
  status(runId: RunId): ScoringStatus {
    return scoringStatus(this.store, this.scoring, runId);
  }

  /** Attaches the admitted scorers' versions to the run, and starts scoring. */
  attach(run: Run, { built }: AdmittedScorers): void {
    const runId = run.id;
    const versions = built.map((b) => ({
      version: b.scorer.version,
      name: b.scorer.name,
      kind: b.scorer.kind,
      layer: b.layer,
      judges: b.scorer.judges,
      definition: b.definition,
    }));
    try {
      this.scoring.scores.attach(runId, versions);
    } catch (err) {
      // One transaction: on a full disk nothing was attached.
      if (isDiskFull(err)) throw diskFullError(this.store.path, `the scorers could not be attached to run ${runId}`, err);
      throw err;
    }
    this.events.scoringChanged(runId);
    void this.scoring.worker.wake();
  }

  /**
   * A judge's calls run under its run's privacy mode, like the run's own calls: in a strict run a
   * judge with no privacy-safe host could never answer, and a judge none of whose hosts has its API
   * key could never be called at all. Either is refused here, naming it and why, rather than
   * attached to fail every record.
   */
  refuseUncallableJudges(privacy: PrivacyMode, built: readonly BuiltScorer[], whose: string): void {
    const strict = effectivePrivacy(privacy, this.router.privacyLock) === 'strict';
    const posture = built.some((b) => b.scorer.judges.length > 0) ? new Map(this.router.posture().models.map((m) => [m.model, m])) : null;
    built.forEach(({ scorer }, i) =>
      scorer.judges.forEach((judge, j) => {
        const where = `scorers.${i}.judges.${j}`;
        if (strict && !this.catalogData.hosts(judge).some((h) => h.privacySafe)) {
          throw new PanoptesError(
            'invalid_input',
            `${where}: judge "${judge}" has no privacy-safe host, and ${whose} is strict (its judges obey its privacy mode)${this.router.privacyLock === 'strict' ? ' (this instance is locked to strict)' : ''}`,
            { where },
          );
        }
        const hosts = (posture?.get(judge)?.hosts ?? []).filter((h) => !strict || h.privacySafe);
        // Only a missing key is for good; a host cooling down or over budget comes back.
        if (hosts.length > 0 && hosts.every((h) => h.state === 'no_key')) {
          const why = [...new Set(hosts.map((h) => h.reason ?? 'its API key is not set'))].join('; ');
          throw new PanoptesError('invalid_input', `${where}: judge "${judge}" has no host it can call: ${why}`, { where });
        }
      }),
    );
  }
}
