/**
 * Run again as a form: the draft of a finished run (what Run again would create, from `runDraft`)
 * laid into New run's fields, every one of them left for the user to change before Create.
 * Runs on: renderer.
 */
import type { MethodResult, PrivacyMode } from '../api/types.js';
import type { StagedRunChoice } from './staged-run-fields.js';

export type RunDraft = MethodResult<'runDraft'>;

/** The New run fields a draft fills; each takes the text or value the form keeps. */
export interface DraftFields {
  setModels: (models: string[]) => void;
  setEpochs: (text: string) => void;
  setConcurrency: (text: string) => void;
  setPrivacy: (mode: PrivacyMode) => void;
  setUseCache: (on: boolean) => void;
  setShareCache: (on: boolean) => void;
  setTemperature: (text: string) => void;
  setMaxTokens: (text: string) => void;
  setSeed: (text: string) => void;
  setScoringText: (text: string) => void;
  setRunName: (text: string) => void;
  /** The Template and reasoning fieldset's values. */
  setStaged: (choice: StagedRunChoice) => void;
}

const text = (n: number | undefined): string => (n === undefined ? '' : String(n));

export function applyDraft(draft: RunDraft, f: DraftFields): void {
  f.setModels([...draft.models]);
  f.setEpochs(String(draft.epochs));
  if (draft.concurrency !== undefined) f.setConcurrency(String(draft.concurrency));
  if (draft.privacy !== undefined) f.setPrivacy(draft.privacy);
  f.setUseCache(draft.skipPromptCache !== true);
  f.setShareCache(draft.shareCacheAcrossEpochs === true);
  f.setTemperature(text(draft.sampling?.temperature));
  f.setMaxTokens(text(draft.sampling?.maxTokens));
  f.setSeed(text(draft.sampling?.seed));
  f.setScoringText(draft.scorers ? JSON.stringify(draft.scorers, null, 2) : '');
  f.setRunName(draft.name ?? '');
  const { reasoningEffort, thinkingBudget } = draft.sampling ?? {};
  f.setStaged({
    ...(draft.template === undefined ? {} : { template: draft.template }),
    ...(reasoningEffort === undefined ? {} : { reasoningEffort }),
    ...(thinkingBudget === undefined ? {} : { thinkingBudget: String(thinkingBudget) }),
  });
}
