/**
 * Chat vignettes end to end: a manifest line with `messages` is checked turn by turn, stored with
 * its run, posed as a conversation through the OpenAI-compatible and Anthropic providers (local
 * fake servers checking what arrives), kept apart in the prompt cache from a conversation that
 * ends the same way, counted whole in the run's token estimate, and exported with its turns.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatTurn } from '../../core/domain.js';
import { checkManifest, parseManifestLine } from '../../core/manifest.js';
import { useTempEngines } from '../helpers/temp-engine.js';
import { FakeProvider } from '../models/fake-provider.js';
import { host, openaiProvider } from '../models/helpers.js';

const CONVERSATION: ChatTurn[] = [
  { role: 'system', content: 'You are a terse triage nurse.' },
  { role: 'user', content: 'My chest hurts.' },
  { role: 'assistant', content: 'Since when?' },
  { role: 'user', content: 'An hour. What should I do?' },
];
/** Ends with the same user turn, after a different history: a different call. */
const OTHER: ChatTurn[] = [
  { role: 'user', content: 'I cut my finger.' },
  { role: 'assistant', content: 'Is it bleeding a lot?' },
  { role: 'user', content: 'An hour. What should I do?' },
];

describe('manifest lines with messages', () => {
  it('a conversation ending with a user turn is a vignette whose prompt is that turn', () => {
    const v = parseManifestLine(JSON.stringify({ id: 'c1', messages: CONVERSATION, target: 'ambulance' }), 1);
    expect(v).toEqual({ id: 'c1', prompt: 'An hour. What should I do?', messages: CONVERSATION, target: 'ambulance' });
  });

  it.each([
    [{ id: 'x', prompt: 'p', messages: OTHER }, 'give "prompt" or "messages", not both'],
    [{ id: 'x' }, 'missing "prompt"'],
    [{ id: 'x', system: 's', messages: OTHER }, '"system" does not go with "messages"'],
    [{ id: 'x', messages: [] }, '"messages" must hold at least one turn'],
    [{ id: 'x', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] }, '"messages.1.role" the last turn must be the user\'s'],
    [{ id: 'x', messages: [{ role: 'user', content: 'a' }, { role: 'system', content: 'b' }, { role: 'user', content: 'c' }] }, '"messages.1.role" a system turn must come before'],
    [{ id: 'x', messages: [{ role: 'tool', content: 'a' }] }, '"messages.0.role" must be "system", "user" or "assistant"'],
    [{ id: 'x', messages: [{ role: 'user', content: 7 }] }, '"messages.0.content" must be a string'],
    [{ id: 'x', messages: [{ role: 'user', content: '  ' }] }, '"messages.0.content" must not be empty'],
    [{ id: 'x', messages: [{ role: 'user', content: 'a', name: 'bob' }] }, '"messages.0"'],
  ])('refuses %j naming the field', (line, message) => {
    const issue = parseManifestLine(JSON.stringify(line), 7);
    expect(issue).toMatchObject({ line: 7 });
    expect((issue as { message: string }).message).toContain(message);
  });

  it('counts every turn of a conversation in the characters the token estimate starts from', async () => {
    const t = useless();
    writeFileSync(t, `${JSON.stringify({ id: 'c1', messages: CONVERSATION })}\n${JSON.stringify({ id: 'p', prompt: 'abc', system: 'de' })}\n`);
    const check = await checkManifest(t);
    expect(check.promptChars).toBe(CONVERSATION.reduce((n, m) => n + m.content.length, 0) + 5);
  });
});

let scratch = 0;
function useless(): string {
  return join(tmp.dir, `m${(scratch += 1)}.jsonl`);
}

let fake: FakeProvider;
beforeEach(async () => {
  fake = await new FakeProvider().start();
});
afterEach(async () => {
  await fake.stop();
});
const tmp = useTempEngines();

describe('a chat vignette through the providers', () => {
  it('is posed as the conversation by the OpenAI-compatible and the Anthropic provider, kept apart in the cache, stored and exported with its turns', async () => {
    const catalogPath = join(tmp.dir, 'catalog.json');
    writeFileSync(
      catalogPath,
      JSON.stringify({
        providers: {
          fakeai: openaiProvider(fake.url),
          fakeant: { kind: 'anthropic', baseUrl: fake.url, trainsOnData: false, timeoutMs: 2000, apiKeyEnv: 'PANOPTES_TEST_ANTHROPIC_KEY' },
        },
        models: { 'fake-gpt': { hosts: [host('fakeai', 'fake-gpt-1')] }, 'fake-claude': { hosts: [host('fakeant', 'fake-claude-1')] } },
      }),
    );
    process.env.PANOPTES_TEST_ANTHROPIC_KEY = 'sk-ant-test-key-123456';
    fake.always('fake-gpt-1', { kind: 'ok', text: 'Call an ambulance.' });
    fake.always('fake-claude-1', { kind: 'ok', text: 'Call 911.' });
    const manifest = join(tmp.dir, 'chat.jsonl');
    writeFileSync(manifest, [{ id: 'chest', messages: CONVERSATION }, { id: 'finger', messages: OTHER }, { id: 'plain', prompt: 'Hello?' }].map((l) => JSON.stringify(l)).join('\n') + '\n');
    const e = tmp.open({ catalogPaths: [catalogPath], tickMs: 20 });
    try {
      const run = await e.service.createRun({ manifestPath: manifest, models: ['fake-gpt', 'fake-claude'], epochs: 1 });
      expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });

      const openai = fake.arrivals.filter((a) => a.model === 'fake-gpt-1');
      const anthropic = fake.arrivals.filter((a) => a.model === 'fake-claude-1');
      // Two conversations ending with the same user turn are two calls: the cache key holds every turn.
      expect(openai).toHaveLength(3);
      expect(anthropic).toHaveLength(3);
      const sentOpenai = openai.map((a) => a.body.messages);
      expect(sentOpenai).toContainEqual(CONVERSATION);
      expect(sentOpenai).toContainEqual(OTHER);
      const chest = anthropic.find((a) => JSON.stringify(a.body.messages).includes('chest'))!;
      expect(chest.body.system).toBe('You are a terse triage nurse.');
      expect(chest.body.messages).toEqual(CONVERSATION.slice(1));

      const lines = readFileSync(join(e.dataDir, 'runs', run.id, 'responses.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const chestLine = lines.find((l) => l.vignette_id === 'chest' && l.model === 'fake-claude')!;
      expect(chestLine).toMatchObject({ prompt: 'An hour. What should I do?', messages: CONVERSATION, response: 'Call 911.' });
      expect(lines.find((l) => l.vignette_id === 'plain')).not.toHaveProperty('messages');

      const page = await e.service.responses({ runId: run.id, vignetteId: 'finger' });
      expect(page.items.map((r) => r.messages)).toEqual([OTHER, OTHER]);

      const csvPath = join(tmp.dir, 'out.csv');
      await e.service.exportRun({ runId: run.id, outPath: csvPath, format: 'csv' });
      const csv = readFileSync(csvPath, 'utf8');
      expect(csv.split('\n')[0]!.split(',')).toContain('messages');
      expect(csv).toContain(`"${JSON.stringify(OTHER).replace(/"/g, '""')}"`);

      // Resumed or re-posed, the stored conversation is what is posed: a second run of the manifest is answered by the cache.
      const again = await e.service.createRun({ manifestPath: manifest, models: ['fake-gpt'], epochs: 1 });
      await e.scheduler.runToCompletion(again.id);
      expect(fake.arrivals.filter((a) => a.model === 'fake-gpt-1')).toHaveLength(3);
    } finally {
      delete process.env.PANOPTES_TEST_ANTHROPIC_KEY;
    }
  });
});
