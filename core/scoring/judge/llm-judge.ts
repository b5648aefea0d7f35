/**
 * The LLM judge: a Scorer that poses a rubric to one or more judge models through a ModelClient
 * (the engine's router, so budget, privacy, the prompt cache and pacing apply to judges as to the
 * sweep) and returns one verdict per judge.
 *
 * Bias controls: the prompt holds the vignette, its target and the answers, never a model's name
 * (an answer that names its own model, or another, has the name replaced by "[model]"); a judge that is the candidate model (or the same underlying model) is flagged in the
 * explanation and in `judgeCall.selfJudged`; pairwise mode asks both orders and calls a tie when
 * they disagree, so a judge that favours a position cannot decide. Judges answer at temperature 0
 * with a fixed seed unless the definition says otherwise. Judge calls run under the router
 * profile `judge`: their own budget window and metrics tag, and their usage rides on each verdict
 * (`judgeCall.usage`) so the engine accounts judge tokens and cost apart from the sweep's.
 *
 * A judge answer that cannot be read is a failed verdict quoting the judge's words (asking again
 * at temperature 0 would give the same answer). A judge call that fails rejects with the call's
 * error, whose `retryable` says whether scoring this answer later can succeed.
 * Runs on: Node (core).
 */
import { PanoptesError, type ScorerKind } from '../../domain.js';
import type { Catalog } from '../../models/catalog.js';
import { parseVerdict, renderJudgePrompt, type JudgePrompt, type Verdict } from '../../models/judge-protocol.js';
import type { ChatMessage, ModelClient, ModelResponse } from '../../models/model-client.js';
import { UnscorableRecord, type JudgeCallFacts, type ScoreInput, type Scorer, type ScoreValue } from '../scorer.js';
import { readBaselineFile, type BaselineAnswers } from './baseline-file.js';
import { resolveJudgeDefinition, type JudgeDefinition, type ResolvedJudgeDefinition } from './judge-definition.js';

/** The router profile judge calls run under: their own budget window and metrics tag. */
export const JUDGE_PROFILE = 'judge';

/** How much of an unreadable answer the explanation quotes. */
const QUOTE_CHARS = 300;

export interface LlmJudgeOptions {
  definition: JudgeDefinition;
  /** The scorer version (the engine's hash of the whole definition). */
  version: string;
  /** Where judge calls go: the engine's router. */
  client: ModelClient;
  /**
   * The catalog the models come from: a judge is then flagged when it serves the same provider
   * model as the candidate under another id, and hosts' model names are kept out of prompts too.
   */
  catalog?: Catalog;
  /**
   * The folders a baseline file must still be in when it is read again to score, by the real path
   * of the file opened (a server's manifest roots); absent where any file may be read.
   */
  baselineRoots?: readonly string[] | undefined;
}

type Usage = JudgeCallFacts['usage'];

function usageOf(responses: readonly ModelResponse[]): Usage {
  const u: Usage = { calls: 0, inputTokens: 0, outputTokens: 0, cachedCalls: 0, cachedInputTokens: 0, cachedOutputTokens: 0 };
  for (const r of responses) {
    u.calls += 1;
    if (r.cached) {
      u.cachedCalls += 1;
      u.cachedInputTokens += r.usage.inputTokens;
      u.cachedOutputTokens += r.usage.outputTokens;
    } else {
      u.inputTokens += r.usage.inputTokens;
      u.outputTokens += r.usage.outputTokens;
    }
  }
  return u;
}

function quote(text: string): string {
  const t = text.trim();
  return JSON.stringify(t.length > QUOTE_CHARS ? `${t.slice(0, QUOTE_CHARS)}…` : t);
}

/** A host's provider model id without the provider's prefix, case-folded: `openai/gpt-4o` at a gateway and `gpt-4o` at the vendor are one model. */
const bareModel = (hostModel: string) => hostModel.slice(hostModel.lastIndexOf('/') + 1).toLowerCase();

/** Names shorter than this are left in prompts: replacing every "a" or "o1" in an answer would garble it. */
const MIN_REDACTED_NAME = 3;
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

class LlmJudge implements Scorer {
  readonly name: string;
  readonly version: string;
  readonly kind: ScorerKind;
  readonly judges: readonly string[];
  readonly baseline?: string;
  private readonly def: ResolvedJudgeDefinition;
  /** Per candidate model: the pattern of every model name its prompts must not carry. */
  private readonly redactors = new Map<string, RegExp>();
  /** A baseline file's answers, read once when the first record needs them and kept while the scorer lives. */
  private fileAnswers: Promise<BaselineAnswers> | null = null;

  constructor(private readonly opts: LlmJudgeOptions) {
    this.def = resolveJudgeDefinition(opts.definition);
    this.name = this.def.name;
    this.version = opts.version;
    this.judges = this.def.judges;
    this.kind = this.def.mode === 'single' && this.def.scale === 'pass_fail' ? 'pass_fail' : 'graded';
    if (this.def.baseline !== null) this.baseline = this.def.baseline;
  }

  async score(input: ScoreInput, signal?: AbortSignal): Promise<ScoreValue[]> {
    if (this.def.mode === 'pairwise') return this.scorePairwise(input, signal);
    const messages = renderJudgePrompt({
      ...this.material(input),
      rubric: this.def.rubric,
      scale: this.def.scale,
      answers: [this.redact(input.response, input.model)],
    });
    return Promise.all(
      this.def.judges.map(async (judge) => {
        const res = await this.ask(judge, messages, input, signal);
        return this.single(judge, input, parseVerdict(res.text, 'single', this.def.scale), res);
      }),
    );
  }

  private material(input: ScoreInput): Pick<JudgePrompt, 'context' | 'question' | 'reference'> {
    const v = input.vignette;
    const redact = (t: string | undefined) => (t === undefined ? undefined : this.redact(t, input.model));
    return { context: redact(v.system), question: this.redact(v.prompt, input.model), reference: redact(v.target) };
  }

  /** Names of a model: its id and its hosts' provider model ids, whole and without the provider's prefix. */
  private namesOf(model: string): string[] {
    const hosts = this.opts.catalog?.hosts(model) ?? [];
    return [model, ...hosts.flatMap((h) => [h.model, h.model.slice(h.model.lastIndexOf('/') + 1)])];
  }

  /** The text with every name of the candidate, the baseline and the judges replaced by "[model]". */
  private redact(text: string, candidate: string): string {
    let re = this.redactors.get(candidate);
    if (!re) {
      const models = [candidate, ...this.def.judges, ...(this.def.baseline === null ? [] : [this.def.baseline])];
      const names = [...new Set(models.flatMap((m) => this.namesOf(m)))].filter((n) => n.length >= MIN_REDACTED_NAME);
      // Longest first, so a name that contains another is replaced whole.
      names.sort((a, b) => b.length - a.length);
      re = new RegExp(names.map(escapeRegExp).join('|'), 'gi');
      this.redactors.set(candidate, re);
    }
    return text.replace(re, '[model]');
  }

  private ask(judge: string, messages: ChatMessage[], input: ScoreInput, signal: AbortSignal | undefined): Promise<ModelResponse> {
    return this.opts.client.generate({
      model: judge,
      messages,
      sampling: this.def.sampling,
      // The judged run's privacy mode and prompt-cache choice: a strict run's judges stay on privacy-safe
      // hosts, a permissive run's judges may use the hosts its own calls may use.
      privacy: input.calls.privacy,
      skipPromptCache: input.calls.skipPromptCache,
      // A verdict depends on the prompt alone: the same answer at another epoch is the same question to the judge.
      shareCacheAcrossEpochs: true,
      runId: input.runId,
      profile: JUDGE_PROFILE,
      ...(signal ? { signal } : {}),
    });
  }

  /** The judge is the model: the same id, or (by the catalog) a host of each serves the same provider model. */
  private selfJudged(judge: string, model: string): boolean {
    if (judge === model) return true;
    const hosts = this.opts.catalog;
    if (!hosts) return false;
    const judged = new Set(hosts.hosts(model).map((h) => bareModel(h.model)));
    return hosts.hosts(judge).some((h) => judged.has(bareModel(h.model)));
  }

  /** The explanation's prefix that says what the reader must weigh before the verdict. */
  private flag(selfJudged: boolean): string {
    if (!selfJudged) return '';
    return this.def.mode === 'pairwise' ? '[self-judged: the judge is one of the models compared] ' : '[self-judged: the judge is the candidate model] ';
  }

  private failedVerdict(judge: string, selfJudged: boolean, why: string, raw: string, usage: Usage): ScoreValue {
    return {
      value: 0,
      passed: this.kind === 'pass_fail' ? false : null,
      severity: this.def.severity,
      explanation: `${this.flag(selfJudged)}the judge's answer is no verdict (${why}): ${quote(raw)}`,
      judge,
      judgeCall: { selfJudged, unreadable: true, usage },
    };
  }

  private single(judge: string, input: ScoreInput, v: Verdict, res: ModelResponse): ScoreValue {
    const selfJudged = this.selfJudged(judge, input.model);
    const usage = usageOf([res]);
    if (!v.ok || v.kind !== 'score') return this.failedVerdict(judge, selfJudged, v.ok ? 'a winner where a score was asked' : v.why, res.text, usage);
    const scale = this.def.scale;
    const value = scale === 'pass_fail' ? v.score : (v.score - scale.min) / (scale.max - scale.min);
    const passed = scale === 'pass_fail' ? v.score === 1 : null;
    const grade = scale === 'pass_fail' ? (passed ? 'pass' : 'fail') : `${v.score} on ${scale.min}..${scale.max}`;
    return {
      value,
      passed,
      severity: passed === false ? this.def.severity : 'none',
      explanation: `${this.flag(selfJudged)}${grade}: ${v.reason || 'no reason given'}`,
      judge,
      judgeCall: { selfJudged, unreadable: false, usage },
    };
  }

  /**
   * Both orders of (answer, baseline's answer) to each judge: 1 when the answer wins both, 0 when
   * it loses both, 0.5 for a tie, and a tie when the two orders disagree.
   */
  private async scorePairwise(input: ScoreInput, signal: AbortSignal | undefined): Promise<ScoreValue[]> {
    const baseline = this.def.baseline;
    if (input.model === baseline) {
      return this.def.judges.map((judge) => {
        const selfJudged = this.selfJudged(judge, input.model);
        return {
          value: 0.5,
          passed: null,
          severity: 'none' as const,
          explanation: `${this.flag(selfJudged)}this is the baseline's own answer: nothing to compare`,
          judge,
          judgeCall: { selfJudged, unreadable: false, usage: usageOf([]) },
        };
      });
    }
    const theirAnswer = this.def.baselineFile === null ? input.baseline?.response : await this.answerFromFile(input);
    if (theirAnswer === undefined) {
      throw new PanoptesError('invalid_input', `pairwise judge "${this.name}" needs the baseline model's answer to vignette ${input.vignette.id} at epoch ${input.epoch}`, {
        where: 'baseline',
      });
    }
    const material = { ...this.material(input), rubric: this.def.rubric, scale: this.def.scale };
    const answer = this.redact(input.response, input.model);
    const theirs = this.redact(theirAnswer, input.model);
    const first = renderJudgePrompt({ ...material, answers: [answer, theirs] });
    const second = renderJudgePrompt({ ...material, answers: [theirs, answer] });
    return Promise.all(
      this.def.judges.map(async (judge) => {
        const selfJudged = this.selfJudged(judge, input.model) || (baseline !== null && this.selfJudged(judge, baseline));
        const [r1, r2] = await Promise.all([this.ask(judge, first, input, signal), this.ask(judge, second, input, signal)]);
        const usage = usageOf([r1, r2]);
        const v1 = parseVerdict(r1.text, 'pairwise', this.def.scale);
        const v2 = parseVerdict(r2.text, 'pairwise', this.def.scale);
        for (const [v, r, order] of [[v1, r1, 'answer first'], [v2, r2, 'baseline first']] as const) {
          if (!v.ok || v.kind !== 'winner') return this.failedVerdict(judge, selfJudged, `${order}: ${v.ok ? 'a score where a winner was asked' : v.why}`, r.text, usage);
        }
        const o1 = outcome(v1, 'A');
        const o2 = outcome(v2, 'B');
        const agreed = o1 === o2;
        const result = agreed ? o1 : 'tie';
        const reasons = `answer first: ${o1} (${reasonOf(v1)}); baseline first: ${o2} (${reasonOf(v2)})`;
        return {
          value: result === 'win' ? 1 : result === 'loss' ? 0 : 0.5,
          passed: null,
          severity: 'none' as const,
          explanation: `${this.flag(selfJudged)}${agreed ? result : 'tie: the two orders disagree'} against the baseline; ${reasons}`,
          judge,
          judgeCall: { selfJudged, unreadable: false, usage },
        };
      }),
    );
  }

  /** The baseline file's answer for the record: the file must still hold what the scorer version pinned. */
  private async answerFromFile(input: ScoreInput): Promise<string> {
    const file = this.def.baselineFile!;
    this.fileAnswers ??= readBaselineFile(file.path, 'baselineFile', { sha256: file.sha256 ?? undefined, roots: this.opts.baselineRoots });
    let answers: BaselineAnswers;
    try {
      answers = await this.fileAnswers;
    } catch (err) {
      throw new UnscorableRecord((err as Error).message);
    }
    if (file.sha256 !== null && answers.sha256 !== file.sha256) {
      throw new UnscorableRecord(`the baseline file "${file.path}" no longer has the content this scorer version was made with (sha256 ${file.sha256}, now ${answers.sha256})`);
    }
    const answer = answers.answer(input.vignette.id, input.epoch);
    if (answer === undefined) throw new UnscorableRecord(`no baseline answer for vignette ${input.vignette.id} in "${file.path}"`);
    return answer;
  }
}

/** The candidate's result in one order, where it stood at `position`. */
function outcome(v: Verdict, position: 'A' | 'B'): 'win' | 'loss' | 'tie' {
  if (!v.ok || v.kind !== 'winner' || v.winner === 'tie') return 'tie';
  return v.winner === position ? 'win' : 'loss';
}

function reasonOf(v: Verdict): string {
  return v.ok ? v.reason || 'no reason given' : v.why;
}

export function createLlmJudge(opts: LlmJudgeOptions): Scorer {
  return new LlmJudge(opts);
}
