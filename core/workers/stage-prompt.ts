/**
 * A stage's prompt filled in: `{{vignette.prompt}}`, `{{vignette.metadata.KEY}}` (JSON for a value
 * that is not a string), `{{stages.NAME}}` (an earlier stage's answer; a fan-out stage's answers
 * joined by a blank line) and `{{item}}` (the fan-out item). The template was checked when the run
 * was created, so every name here is known; a metadata key the vignette lacks fills in empty.
 * Also: reading a stage's answer as the JSON array a fan-out runs over, and the prompts a record's
 * stored calls were posed with, rebuilt from the template and the answers before them.
 * Runs on: Node (core).
 */
import { PanoptesError, type IndexedVignette, type StageAnswer, type StagedTemplate } from '../domain.js';

export const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

/** What of a vignette its stages' placeholders read. */
export type StagedVignette = Pick<IndexedVignette, 'prompt' | 'metadata'>;

export interface StageScope {
  vignette: StagedVignette;
  /** Answers of the stages run so far, by name (a fan-out stage's joined). */
  answers: ReadonlyMap<string, string>;
  item?: string | undefined;
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function renderStagePrompt(template: string, scope: StageScope): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    if (name === 'vignette.prompt') return scope.vignette.prompt;
    if (name === 'item') return scope.item ?? '';
    if (name.startsWith('vignette.metadata.')) return asText(scope.vignette.metadata?.[name.slice('vignette.metadata.'.length)]);
    if (name.startsWith('stages.')) return scope.answers.get(name.slice('stages.'.length)) ?? '';
    return whole;
  });
}

/**
 * The items of a stage's answer read as a JSON array: the whole answer, else the first `[`...`]`
 * span in it (models wrap JSON in prose or a code fence). Items that are not strings are passed as JSON.
 */
export function fanOutItems(answer: string, stage: string, source: string): string[] {
  const candidates = [answer.trim()];
  const start = answer.indexOf('[');
  const end = answer.lastIndexOf(']');
  if (start !== -1 && end > start) candidates.push(answer.slice(start, end + 1));
  for (const text of candidates) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed.map(asText);
    } catch {
      // Not this candidate: try the next.
    }
  }
  throw new PanoptesError('bad_request', `stage "${stage}" fans out over stage "${source}", whose answer is not a JSON array: ${JSON.stringify(answer.slice(0, 120))}`, {
    retryable: false,
  });
}

/**
 * The prompt of each stored call of a record, rebuilt as the chain posed it: the stage's prompt with
 * the vignette, the answers before it and its fan-out item filled in. A judge round after the first
 * was posed with that prompt and the failed checks' explanations, which are not stored: it shows
 * the stage's prompt. A call whose stage the template lacks (it was edited since) shows null.
 */
export function storedStagePrompts(template: StagedTemplate, v: StagedVignette, calls: readonly StageAnswer[]): Array<string | null> {
  const answers = new Map<string, string>();
  const byName = new Map(template.stages.map((s) => [s.name, s]));
  const fanned = new Map<string, string[]>();
  return calls.map((call, i) => {
    const stage = byName.get(call.stage);
    let prompt: string | null = null;
    if (stage) {
      let item: string | undefined;
      if (stage.fanOut !== undefined && call.item !== null) {
        try {
          item = fanOutItems(answers.get(stage.fanOut) ?? '', stage.name, stage.fanOut)[call.item];
        } catch {
          item = undefined;
        }
      }
      prompt = renderStagePrompt(stage.prompt, { vignette: v, answers, item });
    }
    // A stage's answer is known once its last call is: the last item of a fan-out (joined), the last judge round.
    if (call.item !== null) fanned.set(call.stage, [...(fanned.get(call.stage) ?? []), call.response]);
    if (calls[i + 1]?.stage !== call.stage) answers.set(call.stage, call.item !== null ? fanned.get(call.stage)!.join('\n\n') : call.response);
    return prompt;
  });
}
