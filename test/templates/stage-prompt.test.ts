/**
 * A stage's prompt filled in from the vignette, the earlier stages and the fan-out item, as the
 * staged worker poses it.
 * Runs on: Node (test); pure.
 */
import { describe, expect, it } from 'vitest';
import { renderStagePrompt } from '../../core/workers/stage-prompt.js';

const vignette = { prompt: 'Review the cache.', metadata: { topic: 'caching', owners: ['ana', 'bo'], depth: 2, none: null } };

describe('renderStagePrompt', () => {
  it("fills in the vignette's prompt and metadata: a string as it is, anything else as JSON, a missing key empty", () => {
    const out = renderStagePrompt('{{vignette.prompt}} | {{vignette.metadata.topic}} | {{ vignette.metadata.owners }} | {{vignette.metadata.depth}} | [{{vignette.metadata.none}}] | [{{vignette.metadata.absent}}]', {
      vignette,
      answers: new Map(),
    });
    expect(out).toBe('Review the cache. | caching | ["ana","bo"] | 2 | [] | []');
  });

  it("fills in an earlier stage's answer and the fan-out item, and leaves an unknown name as written", () => {
    const out = renderStagePrompt('{{stages.map}} / {{item}} / {{stages.later}} / {{unknown}}', { vignette, answers: new Map([['map', '["a","b"]']]), item: 'a' });
    expect(out).toBe('["a","b"] / a /  / {{unknown}}');
  });

  it('fills in a vignette without metadata as empty', () => {
    expect(renderStagePrompt('<{{vignette.metadata.topic}}>', { vignette: { prompt: 'p' }, answers: new Map() })).toBe('<>');
  });
});
