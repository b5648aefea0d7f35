/**
 * `panoptes import promptfoo CONFIG`: one vignette per prompt x test case, as promptfoo makes one
 * case per prompt x test for each provider. The vignette's id is `<variant>:<item>` — the prompt
 * (its id, or `prompt-N`) and the test case (`tN`) — and its metadata keeps both, the prompt's and
 * test's indexes, the test's description and its vars, so results read back against promptfoo's.
 * A prompt that renders to a JSON list of chat messages is a conversation, as promptfoo sends it.
 * Runs on: Node (core).
 */
import { PanoptesError, type ChatTurn } from '../domain.js';
import { chatTurns } from './chat-turns.js';
import type { ImportOutcome, ImportedVignette, VignetteSink } from './imported-suite.js';
import { loadPromptfooConfig, type PromptfooCase } from './promptfoo-config.js';
import { planAssertions } from './promptfoo-assertions.js';
import { renderTemplate, TemplateError } from './template.js';

export interface PromptfooImportOptions {
  /** The catalog model a promptfoo provider id names (`openai:gpt-4.1` → `gpt-4.1`), if any. */
  matchModel: (providerId: string) => string | undefined;
  /** The judge model for `llm-rubric` assertions. */
  judge: string;
}

function render(template: string, c: PromptfooCase, where: string): string {
  try {
    return renderTemplate(template, c.vars);
  } catch (err) {
    if (err instanceof TemplateError) throw new PanoptesError('invalid_input', `${where}: ${err.message}`, { where });
    throw err;
  }
}

/**
 * A rendered prompt that is a JSON list of chat messages (`[{"role": ..., "content": ...}]`), as
 * promptfoo reads one, as a conversation; undefined for any other text, which is posed as it is
 * (promptfoo, too, sends text that does not parse as JSON as one user message).
 */
function chatPrompt(text: string, where: string): ChatTurn[] | undefined {
  const t = text.trim();
  if (!t.startsWith('[')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(t);
  } catch {
    return undefined;
  }
  const isMessage = (m: unknown) => typeof m === 'object' && m !== null && 'role' in m;
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every(isMessage)) return undefined;
  return chatTurns(parsed, where, 'prompt');
}

/** An assertion's string values rendered with the case's vars, as promptfoo renders them. */
function renderValue(value: unknown, c: PromptfooCase, where: string): unknown {
  if (typeof value === 'string') return value.includes('{{') ? render(value, c, where) : value;
  if (Array.isArray(value)) return value.map((v) => renderValue(v, c, where));
  return value;
}

export async function importPromptfoo(configPath: string, opts: PromptfooImportOptions, sink: VignetteSink): Promise<ImportOutcome> {
  const suite = await loadPromptfooConfig(configPath);
  const cases = suite.cases.map((c, t) => ({ ...c, assert: c.assert.map((a) => ({ ...a, value: renderValue(a.value, c, `${configPath}: test case ${t + 1}, assertion ${a.type}`) })) }));
  const plan = planAssertions(cases.map((c) => c.assert), opts.judge);
  const variants = suite.prompts.map((p, i) => (p.id ?? `prompt-${i + 1}`).replace(/[\s:]+/g, '-'));
  const unique = new Set(variants).size === variants.length;
  let chats = 0;
  for (const [pi, prompt] of suite.prompts.entries()) {
    const variant = unique ? variants[pi]! : `prompt-${pi + 1}`;
    for (const [ti, c] of cases.entries()) {
      const item = `t${ti + 1}`;
      const where = `${configPath}: prompt ${pi + 1} x test case ${ti + 1}`;
      const own = plan.perTest[ti]!;
      const metadata: Record<string, unknown> = {
        ...(c.metadata ?? {}),
        item,
        variant,
        prompt_index: pi,
        ...(prompt.id !== undefined ? { prompt_id: prompt.id } : {}),
        test_index: ti,
        ...(c.description !== undefined ? { description: c.description } : {}),
        vars: c.vars,
        ...(own.assert !== undefined ? { assert: own.assert } : {}),
        ...(c.threshold !== undefined && own.assert !== undefined ? { threshold: c.threshold } : {}),
      };
      const text = render(prompt.raw, c, where);
      const messages = chatPrompt(text, where);
      const v: ImportedVignette = messages ? { id: `${variant}:${item}`, messages, metadata } : { id: `${variant}:${item}`, prompt: text, metadata };
      if (messages) chats += 1;
      if (own.target !== undefined) v.target = own.target;
      await sink(v, where);
    }
  }
  const mapped: Array<{ from: string; model: string }> = [];
  const unmapped: string[] = [];
  for (const p of suite.providers) {
    const model = opts.matchModel(p);
    if (model === undefined) unmapped.push(p);
    else mapped.push({ from: p, model });
  }
  const notes = [...suite.notes, ...plan.notes];
  if (chats > 0) notes.push({ what: `chat prompts (${chats} vignettes)`, why: 'a prompt that is a JSON list of messages is posed as a conversation (messages), as promptfoo sends it' });
  if (plan.scorers.some((s) => s.type === 'judge')) notes.push({ what: 'llm-rubric', why: `judged by ${opts.judge} (choose with --judge MODEL)` });
  for (const p of unmapped) notes.push({ what: `provider ${p}`, why: 'no catalog model serves it; add one to a catalog, or choose models at run time' });
  return { scorers: plan.scorers, notes, models: { mapped, unmapped } };
}
