/**
 * The three-stage chain the template tests pose (map -> review each item -> synthesize), and a
 * catalog with one scripted model answering its stages and a judge loop's rounds offline.
 * Runs on: Node (tests).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CHAIN = `name: chain
stages:
  - name: map
    prompt: "MAP: {{vignette.prompt}}"
  - name: review
    fanOut: map
    prompt: "REVIEW {{item}} of {{vignette.prompt}}"
  - name: synthesize
    prompt: "SYNTH: {{stages.review}}"
`;

/** A catalog with one scripted model answering the chain's stages (and the judge loop's rounds). */
export function scriptedCatalog(dir: string): string {
  const file = join(dir, 'scripted.json');
  writeFileSync(file, JSON.stringify({
    providers: { script: { kind: 'scripted', trainsOnData: false } },
    models: {
      scripted: {
        hosts: [{ provider: 'script', model: 'scripted', contextWindow: 32000, inputPerMTok: 1, outputPerMTok: 2, options: {
          rules: [
            { match: '^MAP:', answer: '["alpha","beta","gamma"]' },
            { match: '^REVIEW (\\w+)', answer: 'reviewed $1' },
            { match: '^SYNTH: ([\\s\\S]*)$', answer: 'summary of $1' },
            { match: 'failed these checks', answer: '## Verdict\nfixed on the second round' },
            { match: '^JUDGED', answer: 'no heading at all' },
          ],
        } }],
      },
    },
  }));
  return file;
}

