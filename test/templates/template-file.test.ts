/**
 * A staged template is checked when the run is created, and each problem names its line: an unknown
 * stage in a placeholder, a cycle (a stage naming itself or a later one), a fan-out over a stage
 * that is not earlier, maxRounds outside 1-5. The built-ins parse.
 */
import { describe, expect, it } from 'vitest';
import { BUILTIN_TEMPLATES } from '../../core/templates/builtin-templates.js';
import { parseTemplate, templateFrom } from '../../core/templates/template-file.js';

const good = `name: chain
stages:
  - name: map
    prompt: "List: {{vignette.prompt}} {{vignette.metadata.topic}}"
  - name: review
    fanOut: map
    prompt: "Review {{item}}"
  - name: synthesize
    prompt: "Sum up {{stages.review}} after {{stages.map}}"
    judge:
      maxRounds: 2
      scorers:
        - { name: has-sum, type: regex, pattern: "sum" }
`;

function refusal(text: string): string {
  try {
    parseTemplate(text, 'T.yaml');
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('a staged template', () => {
  it('parses stages, fan-out and the judge loop', () => {
    const t = parseTemplate(good, 'T.yaml');
    expect(t.name).toBe('chain');
    expect(t.stages.map((s) => s.name)).toEqual(['map', 'review', 'synthesize']);
    expect(t.stages[1]!.fanOut).toBe('map');
    expect(t.stages[2]!.judge).toMatchObject({ maxRounds: 2, scorers: [{ name: 'has-sum', type: 'regex' }] });
  });

  it('refuses an unknown stage in a placeholder, with its line', () => {
    expect(refusal(good.replace('{{stages.map}}', '{{stages.nope}}'))).toBe('T.yaml:9: stages.2.prompt: {{stages.nope}}: unknown stage "nope"');
  });

  it('refuses a cycle: a stage naming itself or a later one', () => {
    expect(refusal(good.replace('"Review {{item}}"', '"Review {{item}} {{stages.review}}"'))).toBe(
      'T.yaml:7: stages.1.prompt: {{stages.review}}: stage "review" refers to itself (a cycle)',
    );
    expect(refusal(good.replace('"List: {{vignette.prompt}}', '"List: {{stages.synthesize}}'))).toMatch(
      /^T\.yaml:4: stages\.0\.prompt: \{\{stages\.synthesize\}\}: stage "synthesize" runs after "map" \(a cycle/,
    );
  });

  it('refuses a fan-out over a stage that is not earlier, and {{item}} without one', () => {
    expect(refusal(good.replace('fanOut: map', 'fanOut: synthesize'))).toBe('T.yaml:6: stages.1.fanOut: fanOut: stage "synthesize" is not earlier than "review"');
    expect(refusal(good.replace('fanOut: map', 'fanOut: elsewhere'))).toBe('T.yaml:6: stages.1.fanOut: fanOut: unknown stage "elsewhere"');
    expect(refusal(good.replace('    fanOut: map\n', ''))).toBe('T.yaml:6: stages.1.prompt: stage "review" uses {{item}} but has no fanOut');
  });

  it('refuses maxRounds outside 1-5, with its line', () => {
    expect(refusal(good.replace('maxRounds: 2', 'maxRounds: 6'))).toBe('T.yaml:11: stages.2.judge.maxRounds: maxRounds must be 1 to 5');
    expect(refusal(good.replace('maxRounds: 2', 'maxRounds: 0'))).toBe('T.yaml:11: stages.2.judge.maxRounds: maxRounds must be 1 to 5');
  });

  it('refuses a judge loop before the last stage, a bad scorer, and text that is not YAML', () => {
    const early = `name: x\nstages:\n  - name: a\n    prompt: p\n    judge: { maxRounds: 1, scorers: [{ name: s, type: match }] }\n  - name: b\n    prompt: q\n`;
    expect(refusal(early)).toBe('T.yaml:5: stages.0.judge: a judge loop belongs to the last stage, not "a"');
    expect(refusal(good.replace('pattern: "sum"', 'pattern: "(unclosed"'))).toMatch(/^T\.yaml:13: stages\.2\.judge\.scorers\.0\.pattern: not a valid regular expression/);
    expect(refusal('name: [unclosed\n')).toMatch(/^T\.yaml:\d+: not YAML/);
  });

  it('offers the built-ins by name, each a valid template', () => {
    expect(Object.keys(BUILTIN_TEMPLATES).sort()).toEqual(['design_doc', 'panel_debate', 'redteam', 'repo_audit']);
    for (const name of Object.keys(BUILTIN_TEMPLATES)) expect(templateFrom(name, 'template').name).toBe(name);
    expect(templateFrom('repo_audit', 'template').stages.map((s) => s.fanOut ?? null)).toEqual([null, 'map', null]);
  });
});
