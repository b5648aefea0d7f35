/**
 * One vignette posed through a staged template: the stages in order, a fan-out stage once per item
 * of an earlier stage's JSON array (one call at a time, under the vignette's own permit of the
 * worker's call bound), and on the last stage an optional judge loop: its answer is scored and, on a
 * hard fail, posed again with the failed checks' explanations, up to `maxRounds` rounds. What comes
 * back is the last call's answer as the record's, with every call behind it (`stages`), and usage
 * and latency summed over the calls, so stats and cost count them all.
 * Runs on: Node (core).
 */
import { PanoptesError, addUsage, emptyUsage, type IndexedVignette, type StageAnswer, type StagedTemplate, type TemplateStage, type Usage } from '../domain.js';
import type { ChatMessage, ModelResponse } from '../models/model-client.js';
import { fanOutItems, renderStagePrompt } from './stage-prompt.js';

/** The judge loop's verdict on an answer: passed, or the explanations of the hard fails. */
export interface StageVerdict {
  passed: boolean;
  failed: string[];
}

/** Scores a final stage's answer with the scorer definitions of its judge loop (the engine builds it from its scorer registry). */
export type StageJudge = (scorers: readonly unknown[], input: { vignette: IndexedVignette; response: string }) => Promise<StageVerdict>;

/** One call of a stage: the caller's retries, bounds and cancellation apply to it. */
export type StageCall = (messages: ChatMessage[]) => Promise<ModelResponse>;

export interface StagedAnswer {
  response: string;
  usage: Usage;
  latencyMs: number;
  host: string;
  cached: boolean;
  stages: StageAnswer[];
}

function messages(v: IndexedVignette, content: string): ChatMessage[] {
  return v.system ? [{ role: 'system', content: v.system }, { role: 'user', content }] : [{ role: 'user', content }];
}

function retryPrompt(prompt: string, failed: readonly string[]): string {
  return `${prompt}\n\nYour previous answer failed these checks:\n${failed.map((f) => `- ${f}`).join('\n')}\nAnswer again, meeting every check.`;
}

export async function runStagedTemplate(template: StagedTemplate, v: IndexedVignette, call: StageCall, judge: StageJudge | undefined): Promise<StagedAnswer> {
  const answers = new Map<string, string>();
  const calls: StageAnswer[] = [];
  const ask = async (stage: TemplateStage, prompt: string, item: number | null, round: number): Promise<string> => {
    const res = await call(messages(v, prompt));
    calls.push({ stage: stage.name, item, round, response: res.text, usage: res.usage, latencyMs: res.latencyMs, host: res.host, cached: res.cached });
    return res.text;
  };
  for (const stage of template.stages) {
    if (stage.fanOut !== undefined) {
      const items = fanOutItems(answers.get(stage.fanOut) ?? '', stage.name, stage.fanOut);
      const out: string[] = [];
      for (const [i, item] of items.entries()) out.push(await ask(stage, renderStagePrompt(stage.prompt, { vignette: v, answers, item }), i, 1));
      answers.set(stage.name, out.join('\n\n'));
      continue;
    }
    const prompt = renderStagePrompt(stage.prompt, { vignette: v, answers });
    let answer = await ask(stage, prompt, null, 1);
    if (stage.judge) {
      if (!judge) throw new PanoptesError('internal', `stage "${stage.name}" has a judge loop, and this worker has no scorers to run it`, { retryable: false });
      for (let round = 2; ; round++) {
        const verdict = await judge(stage.judge.scorers, { vignette: v, response: answer });
        if (verdict.passed || round > stage.judge.maxRounds) break;
        answer = await ask(stage, retryPrompt(prompt, verdict.failed), null, round);
      }
    }
    answers.set(stage.name, answer);
  }
  return summarize(calls);
}

/** The record's figures: the last call's answer and host; billed usage summed (cached calls' only when every call was cached). */
function summarize(calls: StageAnswer[]): StagedAnswer {
  const last = calls.at(-1);
  if (!last) throw new PanoptesError('internal', 'a staged template made no call', { retryable: false });
  const cached = calls.every((c) => c.cached);
  const usage = emptyUsage();
  let latencyMs = 0;
  for (const c of calls) {
    if (cached || !c.cached) addUsage(usage, c.usage);
    latencyMs += c.latencyMs;
  }
  return { response: last.response, usage, latencyMs, host: last.host, cached, stages: calls };
}
