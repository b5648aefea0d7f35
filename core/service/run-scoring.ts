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
import { pinBaselineFiles } from '../scoring/judge/baseline-file.js';
import { refuseBaselinesOutsideRun } from '../scoring/judge/baseline-model.js';
import { pairwiseBaselineOf } from '../scoring/judge/judge-definition.js';
import type { BuiltScorer } from '../scoring/scorer-registry.js';
import { buildRunComparison, buildScoreReport, type ScoreCell } from '../scoring/report.js';
import { buildScoreMatrix } from '../scoring/score-matrix.js';
import type { RecordScore, ReportAttempt, RunScorer } from '../store/score-store.js';
import type { Store } from '../store/store.js';
import type { RunComparison, ScoreDetail, ScoreMatrixPage, ScoreReport, ScoringStatus } from './contract.js';
import type { ValidInput } from './contract-dispatcher.js';
import type { EventHub } from './event-hub.js';
import { refuseEmptyTarget } from './empty-targets.js';
import { scoringStatus, type ServiceScoring } from './scoring-status.js';

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

  constructor(opts: RunScoringOptions) {
    this.store = opts.store;
    this.catalogData = opts.catalog;
    this.events = opts.events;
    this.router = opts.router;
    this.scoring = opts.scoring;
  }

  /** Pins the scorers' baseline files, checks them against the run, attaches them and answers with the run's scoring status. */
  async scoreRun(run: Run, input: ValidInput<'scoreRun'>): Promise<ScoringStatus> {
    const scorers = await pinBaselineFiles(input.scorers);
    this.scoring.registry.buildAll(scorers);
    await refuseEmptyTarget(scorers, this.scoring.scores.firstEmptyTarget(run.id), run.manifestPath);
    refuseBaselinesOutsideRun(scorers, run.models, `run ${run.id}`);
    await this.scoring.registry.check(scorers);
    this.attach(run, scorers);
    return this.status(input.runId);
  }

  async report(run: Run, input: ValidInput<'report'>): Promise<ScoreReport> {
    const rs = this.scorerOf(run.id, input.scorer);
    const status = this.status(run.id).scorers.find((s) => s.version === rs.version);
    return buildScoreReport(
      {
        runId: run.id,
        scorer: rs.name,
        scorerVersion: rs.version,
        kind: rs.kind,
        epochs: run.epochs,
        models: run.models,
        pending: status?.pending ?? 0,
        failed: status?.failed ?? 0,
        failure: status?.lastError ?? null,
        by: input.by ?? null,
        attempt: input.attempt ?? 'first',
        ...(input.reducer ? { reducer: input.reducer } : {}),
        ...(rs.layer === 'judge' ? { pairwiseBaseline: pairwiseBaselineOf(rs.definition) } : {}),
        plugin: rs.layer === 'plugin',
      },
      this.reportCells(run.id, rs, input.by ?? null, input.attempt ?? 'first'),
    );
  }

  async compareRuns(a: Run, b: Run, input: ValidInput<'compareRuns'>): Promise<RunComparison> {
    const sa = this.scorerOf(a.id, input.scorer, 'runA');
    const sb = this.scorerOf(b.id, input.scorer ?? sa.name, 'runB');
    if (sa.kind !== sb.kind) {
      throw new PanoptesError('invalid_input', `scorer ${sa.name} is ${sa.kind} in run ${a.id} and ${sb.kind} in run ${b.id}`, { where: 'scorer' });
    }
    return buildRunComparison(
      {
        runA: a.id,
        runB: b.id,
        scorer: sa.name,
        scorerVersionA: sa.version,
        scorerVersionB: sb.version,
        kind: sa.kind,
        epochsA: a.epochs,
        epochsB: b.epochs,
        models: [...a.models, ...b.models.filter((m) => !a.models.includes(m))],
        ...(input.reducer ? { reducer: input.reducer } : {}),
      },
      this.reportCells(a.id, sa, null),
      this.reportCells(b.id, sb, null),
    );
  }

  async scoreMatrix(run: Run, input: ValidInput<'scoreMatrix'>): Promise<ScoreMatrixPage> {
    const rs = this.scorerOf(run.id, input.scorer);
    const scores = this.scoring.scores;
    return buildScoreMatrix(
      {
        runId: run.id,
        scorer: rs.name,
        scorerVersion: rs.version,
        kind: rs.kind,
        models: run.models,
        epochs: run.epochs,
        vignettes: run.vignetteCount,
        judges: rs.judges.length,
        reducer: input.reducer ?? 'mean',
        sort: input.sort ?? 'vignette',
        cursor: input.cursor ?? 0,
        limit: input.limit ?? MATRIX_PAGE,
      },
      { scores: (lo, hi) => scores.matrixScores(run.id, rs.scorerId, lo, hi), heads: (lo, hi) => scores.vignetteHeads(run.id, lo, hi) },
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
        responses.push({ model: r.model, epoch: r.epoch, seq: r.seq, response: r.response, scores, retries });
      }
      cursor = page.nextCursor;
    }
    const order = new Map(run.models.map((m, i) => [m, i]));
    responses.sort((a, b) => (order.get(a.model) ?? 0) - (order.get(b.model) ?? 0) || a.epoch - b.epoch);
    return { runId: run.id, vignette, responses };
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

  /** Builds each scorer (refusing a bad one, naming it), attaches its version to the run, and starts scoring. */
  attach(run: Run, config: ScoringConfig): void {
    const built = this.scoring.registry.buildAll(config);
    this.refuseUncallableJudges(run.options.privacy, built, `run ${run.id}`);
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
