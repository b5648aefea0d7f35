/**
 * The judge loop of a staged template's last stage, as the local worker runs it: the stage's scorer
 * definitions let in by the engine's scorer admission (parsed and built once per set of versions;
 * rules, code plugins, LLM judges alike), an answer scored with each, and the hard fails'
 * explanations handed back for the next round's prompt.
 * On the engine's own worker every judge call is billed to the run before it is made, as a scoring
 * judge's is (`templateJudgeBilling`): counted in the run's judge usage, its tokens added when it
 * answers, taken back on an error, so `stats` holds the judge loop's calls even when a kill -9
 * loses the vignette's record (a resumed vignette asks its judges again, and pays again).
 * A `panoptes worker` builds its own registry and admission (`workerStageJudge`): the judges it asks are this
 * machine's, through its own catalog and keys, and code plugins get no network; each judge call is
 * counted in the coordinator's ledger before it is made (the `bill` its WorkerAgent gives).
 * Runs on: Node (core).
 */
import type { Catalog } from '../models/catalog.js';
import type { ModelClient } from '../models/model-client.js';
import { billedClient } from '../scoring/billed-client.js';
import { judgeScorerBuilder } from '../scoring/judge/judge-builder.js';
import { checkCodeDefinition, codeScorerBuilder } from '../scoring/plugin/code-scorer.js';
import { ScorerAdmission } from '../scoring/scorer-admission.js';
import { ScorerRegistry, type CallBilling } from '../scoring/scorer-registry.js';
import { BilledCalls, TEMPLATE_JUDGE_SCORER_ID, writeNowOrRefuse } from '../store/billed-calls.js';
import type { Store } from '../store/store.js';
import type { StageJudge } from '../workers/staged-eval.js';

/**
 * How a judge loop's calls are billed in `store`: each counted before it is made. A full disk
 * fails the call before it is made (one sentence naming the database): no call is made that
 * cannot be counted, and the vignette, whose record could not be stored either, fails with it.
 */
export function templateJudgeBilling(store: Store): CallBilling {
  const ledger = new BilledCalls(store);
  const write = writeNowOrRefuse(store, "counting a template's judge call");
  return (client) => billedClient(client, { ledger, scorerId: TEMPLATE_JUDGE_SCORER_ID, kind: 'judge', write });
}

export function stageJudgeOf(admission: ScorerAdmission): StageJudge {
  return async (definitions, { runId, vignette, response, signal }) => {
    const failed: string[] = [];
    for (const { scorer } of admission.stageScorers(definitions)) {
      const values = await scorer.score({
        runId,
        model: '',
        epoch: 1,
        vignette: {
          id: vignette.id,
          prompt: vignette.prompt,
          ...(vignette.system === undefined ? {} : { system: vignette.system }),
          ...(vignette.target === undefined ? {} : { target: vignette.target }),
          ...(vignette.metadata === undefined ? {} : { metadata: vignette.metadata }),
        },
        response,
        calls: { privacy: 'strict', skipPromptCache: true },
      }, signal);
      for (const v of values) if (v.severity === 'hard' && v.passed === false) failed.push(`${scorer.name}: ${v.explanation}`);
    }
    return { passed: failed.length === 0, failed };
  };
}

/** A remote worker's judge loop: the built-in scorers, LLM judges through this worker's own client and catalog (each call billed by `bill`), code plugins without network. */
export function workerStageJudge(client: ModelClient, catalog: Catalog, bill: CallBilling): StageJudge {
  const registry = new ScorerRegistry();
  registry.register('judge', judgeScorerBuilder({ client, catalog }));
  const grants = { network: false };
  registry.register('code', codeScorerBuilder(grants), checkCodeDefinition(grants));
  return stageJudgeOf(new ScorerAdmission(registry, bill));
}
