/**
 * The chain the kill -9 template tests pose to a FakeProvider in the test's process, which counts
 * the calls of every process: map -> review each of three items -> synthesize, every prompt naming
 * its vignette so that no two calls of a run are alike; the provider, a temp folder holding the
 * template and the catalog of its one model (`chained`), and what the provider was posed.
 * Runs on: Node (tests).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { FakeProvider } from '../models/fake-provider.js';

const TEMPLATE = `name: chain
stages:
  - name: map
    prompt: "MAP {{vignette.prompt}}"
  - name: review
    fanOut: map
    prompt: "REVIEW {{item}} of {{vignette.prompt}}"
  - name: synthesize
    prompt: "SYNTH {{vignette.prompt}}: {{stages.review}}"
`;

/** The provider's name for the model every stage asks. */
export const CHAIN_MODEL = 'chain-model';

export interface FakeChain {
  fake: FakeProvider;
  /** The temp folder: the template and the catalog are here. */
  dir: string;
  catalog: string;
  template: string;
}

/**
 * Before the file's tests: starts the provider, answering every call with the list after
 * `delayMs` (the map stage fans out over it, the others just say it again), writes the template
 * and the catalog, and hands them to `set`; after them, stops it and removes the folder.
 */
export function useFakeChain(delayMs: number, set: (chain: FakeChain) => void): void {
  let tmp: ReturnType<typeof tempDir> | undefined;
  let fake: FakeProvider | undefined;
  beforeAll(async () => {
    tmp = tempDir();
    fake = await new FakeProvider().start();
    fake.always(CHAIN_MODEL, { kind: 'ok', text: '["alpha","beta","gamma"]', inputTokens: 10, outputTokens: 5, delayMs });
    const catalog = join(tmp.dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({
      providers: { fake: { kind: 'openai', baseUrl: `${fake.url}/v1`, trainsOnData: false, timeoutMs: 5000 } },
      models: { chained: { hosts: [{ provider: 'fake', model: CHAIN_MODEL, contextWindow: 32000 }] } },
    }));
    const template = join(tmp.dir, 'chain.yaml');
    writeFileSync(template, TEMPLATE);
    set({ fake, dir: tmp.dir, catalog, template });
  });
  afterAll(async () => {
    await fake?.stop();
    tmp?.cleanup();
  });
}

/** The prompt a stored map or review stage was posed with (synthesize's names the reviews, and is left out). */
export function stagePrompts(stored: readonly { prompt: string; stage: string; item: number | null }[]): string[] {
  return stored
    .filter((r) => r.stage !== 'synthesize')
    .map((r) => (r.stage === 'map' ? `MAP ${r.prompt}` : `REVIEW ${['alpha', 'beta', 'gamma'][r.item!]} of ${r.prompt}`));
}

/** How many times each prompt reached the provider, over every process. */
export function posedPrompts(fake: FakeProvider): Map<string, number> {
  const posed = new Map<string, number>();
  for (const a of fake.arrivals.filter((x) => x.model === CHAIN_MODEL)) {
    const text = (a.body.messages as { content: string }[]).at(-1)!.content;
    posed.set(text, (posed.get(text) ?? 0) + 1);
  }
  return posed;
}
