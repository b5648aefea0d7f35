/**
 * One vignette posed through a staged template: the stages in order, a fan-out stage once per item
 * of an earlier stage's JSON array (one call at a time, under the vignette's own permit of the
 * worker's call bound), and on the last stage an optional judge loop: its answer is scored and, on a
 * hard fail, posed again with the failed checks' explanations, up to `maxRounds` rounds. What comes
 * back is the last call's answer as the record's, with every call behind it (`stages`), and usage
 * and latency summed over the calls, so stats and cost count them all.
 * A vignette resumed mid-template brings the calls it finished before (`finished`): the chain is
 * walked again from the start, and each call whose place, stage, item and round match a finished
 * one takes that answer instead of being posed, so only the calls after them reach the provider.
 * Every call posed is handed to `onCall` as it answers (the engine stores it at once).
 * Runs on: Node (core).
 */
import { PanoptesError, addUsage, emptyUsage, type IndexedVignette, type RunId, type StageAnswer, type StagedTemplate, type TemplateStage, type Usage } from '../domain.js';
import type { ChatMessage, ModelResponse } from '../models/model-client.js';
import { fanOutItems, renderStagePrompt } from './stage-prompt.js';

/** The judge loop's verdict on an answer: passed, or the explanations of the hard fails. */
export interface StageVerdict {
  passed: boolean;
  failed: string[];
}

/** What a judge loop scores: an answer to a vignette, in the run whose usage its judges' calls are billed to. */
export interface StageJudgeInput {
  runId: RunId;
  vignette: IndexedVignette;
  response: string;
  /** The job's: a cancelled job's judge calls stop with its own (a call aborted half-way stays billed). */
  signal?: AbortSignal | undefined;
}

/** The judge loop as a job runs it: the engine's judge, with the run billed and the job's signal. */
export interface JobStageJudge {
  runId: RunId;
  signal?: AbortSignal | undefined;
  verdict: StageJudge;
}

/** Scores a final stage's answer with the scorer definitions of its judge loop (the engine builds it from its scorer registry). */
export type StageJudge = (scorers: readonly unknown[], input: StageJudgeInput) => Promise<StageVerdict>;

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

/** What a staged vignette resumes from, and where its posed calls go. */
export interface StagedResume {
  /** The calls this vignette finished before, in call order. */
  finished?: readonly StageAnswer[] | undefined;
  /** Hears of each call posed now, with its place in the chain, as it answers. */
  onCall?: ((callIdx: number, answer: StageAnswer) => void) | undefined;
}

export async function runStagedTemplate(
  template: StagedTemplate,
  v: IndexedVignette,
  call: StageCall,
  judge: JobStageJudge | undefined,
  resume: StagedResume = {},
): Promise<StagedAnswer> {
  const answers = new Map<string, string>();
  const calls: StageAnswer[] = [];
  const finished = resume.finished ?? [];
  // Finished calls are reused while the chain walks the same way; from the first that differs, every call is posed.
  let reusing = true;
  const ask = async (stage: TemplateStage, prompt: string, item: number | null, round: number): Promise<string> => {
    const stored = reusing ? finished[calls.length] : undefined;
    if (stored && stored.stage === stage.name && stored.item === item && stored.round === round) {
      calls.push(stored);
      return stored.response;
    }
    reusing = false;
    const res = await call(messages(v, prompt));
    const answer: StageAnswer = { stage: stage.name, item, round, response: res.text, usage: res.usage, latencyMs: res.latencyMs, host: res.host, cached: res.cached };
    resume.onCall?.(calls.length, answer);
    calls.push(answer);
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
        const verdict = await judge.verdict(stage.judge.scorers, { runId: judge.runId, vignette: v, response: answer, signal: judge.signal });
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
