/**
 * `panoptes import promptfoo`: promptfoo's getting-started example and a config with every mapped
 * assertion type, vars arrays, defaultTest, a prompts file and a CSV test file give promptfoo's own
 * prompt x test case counts; the scorers written load (code plugins in the real sandbox) and score
 * answers as promptfoo's assertions would; bad input names its place and writes nothing.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runImport } from '../../core/import/run-import.js';
import { loadCatalog } from '../../core/service/load-catalog.js';
import { closeScorers, manifestOf, promptfooRequest, scorersOf, verdict } from '../helpers/imported-suite.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

const request = (config: string, out: string) => promptfooRequest(config, out, tmp.dir);
afterAll(closeScorers);

describe('promptfoo getting-started', () => {
  it('makes promptfoo\'s 2 prompts x 2 tests = 4 cases, rendered, with the prompt and test in metadata, and maps the providers', async () => {
    const out = join(tmp.dir, 'suite');
    const summary = await runImport(request(join(FIXTURES, 'getting-started/promptfooconfig.yaml'), out));
    const vs = await manifestOf(out);
    expect(summary.vignettes).toBe(4);
    expect(vs.map((v) => v.id)).toEqual(['prompt-1:t1', 'prompt-1:t2', 'prompt-2:t1', 'prompt-2:t2']);
    expect(vs[0]!.prompt).toBe('Convert this English to French: Hello world');
    expect(vs[3]!.prompt).toBe('Translate to Spanish: Where is the library?');
    expect(vs[3]!.metadata).toMatchObject({ item: 't2', variant: 'prompt-2', prompt_index: 1, test_index: 1, vars: { language: 'Spanish' } });
    expect(summary.models.mapped).toEqual([{ from: 'openai:gpt-4.1', model: 'gpt-4.1' }, { from: 'openai:o4-mini', model: 'o4-mini' }].filter((m) => loadCatalog(tmp.dir).has(m.model)));
    const scorers = await scorersOf(out);
    expect([...scorers.keys()]).toEqual(['promptfoo-assert']);
    const check = scorers.get('promptfoo-assert')!;
    expect((await verdict(check, vs[0]!, 'Bonjour le monde!')).value).toBe(1);
    expect((await verdict(check, vs[0]!, 'bonjour le monde')).value).toBe(0); // contains is case-sensitive
    expect((await verdict(check, vs[1]!, '¿DÓNDE ESTÁ LA BIBLIOTECA?')).value).toBe(1); // icontains is not
  });
});

describe('a config with every mapped assertion, vars arrays, defaultTest and a CSV test file', () => {
  it('makes 3 prompts x 8 test cases, maps each assertion, and lists what it cannot carry', async () => {
    const out = join(tmp.dir, 'suite');
    const summary = await runImport(request(join(FIXTURES, 'every-assertion/promptfooconfig.yaml'), out));
    // promptfoo: prompts = the inline one + the two of prompts.txt (split on ---) = 3; tests = the
    // first expanded over question (2) x tone (2) = 4, the JSON test 1, tests.csv's 3 rows = 8.
    expect(summary.vignettes).toBe(3 * 8);
    const vs = await manifestOf(out);
    const byId = new Map(vs.map((v) => [v.id, v]));
    expect(byId.get('terse:t1')!.prompt).toBe('Answer in one word: What is the capital of France?');
    expect(byId.get('prompts.txt-1:t3')!.prompt).toBe('You are formal. What is the capital of France?');
    expect(byId.get('prompts.txt-2:t8')!.prompt).toBe('Question: Name a primary colour\nAnswer:');
    expect(byId.get('terse:t6')!.metadata).toMatchObject({ description: 'arithmetic', vars: { question: 'What is 2+2?', tone: 'plain' } });
    // Per-test rubrics become the vignettes' target, read by the judge as its rubric.
    expect(byId.get('terse:t1')!.target).toBe('Names the capital city of the country asked about');
    expect(byId.get('terse:t8')!.target).toBe('Names a primary colour');
    const scoring = JSON.parse(readFileSync(join(out, 'scorers.json'), 'utf8')) as { scorers: Array<Record<string, unknown>> };
    expect(scoring.scorers.map((s) => [s.name, s.type])).toEqual([
      ['not-icontains', 'banned'],
      ['javascript', 'code'],
      ['promptfoo-assert', 'code'],
      ['llm-rubric', 'judge'],
    ]);
    expect(summary.notes.map((n) => n.what)).toContain('assertion type "similar" (1 test)');
    // The json test and two CSV rows have no rubric of their own: the per-test judge would judge them with none.
    expect(summary.notes.map((n) => n.what)).toContain('llm-rubric judge on tests without a rubric (3 tests)');
    expect(summary.models.mapped.map((m) => m.model)).toEqual(['gpt-4o-mini', 'claude-sonnet-4-5']);
    expect(summary.models.unmapped).toEqual(['ollama:chat:my-finetune:7b']);
    expect(JSON.parse(readFileSync(join(out, 'import-report.json'), 'utf8'))).toMatchObject({ vignettes: 24, models: { unmapped: ['ollama:chat:my-finetune:7b'] } });

    const scorers = await scorersOf(out);
    const own = scorers.get('promptfoo-assert')!;
    const capitals = byId.get('terse:t1')!;
    expect((await verdict(own, capitals, 'Paris is the capital')).value).toBe(1);
    const wrong = await verdict(own, capitals, 'paris');
    expect(wrong.value).toBeCloseTo(0 / 3); // contains-any, icontains-all (capital) and regex all fail
    const json = byId.get('terse:t5')!;
    expect((await verdict(own, json, '{"city": "Paris"}')).value).toBe(1);
    const off = await verdict(own, json, '{"city": "Paris", "n": 1}');
    expect(off.value).toBeCloseTo(5 / 7); // equals and not-regex fail; is-json, not-contains, contains-all, icontains-any, starts-with pass
    expect(off.explanation).toMatch(/equals/);
    const csv = byId.get('terse:t7')!;
    expect((await verdict(own, csv, 'TAC')).value).toBe(1);
    expect((await verdict(own, csv, 'tac, not cat')).value).toBe(0.5);
    expect((await verdict(own, byId.get('terse:t6')!, '4')).value).toBe(1); // a plain __expected is equals
    expect((await verdict(scorers.get('javascript')!, csv, 'x'.repeat(600))).value).toBe(0);
    expect((await verdict(scorers.get('javascript')!, csv, 'short')).value).toBe(1);
    expect((await verdict(scorers.get('not-icontains')!, csv, 'As an AI, tac')).value).toBe(0);
  });
});

describe('chat prompts', () => {
  function configWith(prompts: string[]): string {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    writeFileSync(config, `prompts:\n${prompts.map((p) => `  - ${JSON.stringify(p)}`).join('\n')}\ntests:\n  - vars: { q: What is 2+2? }\n`);
    return config;
  }

  it('a prompt that renders to a JSON list of messages is a conversation, as promptfoo sends it', async () => {
    const chat = JSON.stringify([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Q: {{q}}' }]);
    const out = join(tmp.dir, 'suite');
    const summary = await runImport(request(configWith([chat, '[draft] {{q}}']), out));
    const [conversation, plain] = await manifestOf(out);
    expect(conversation!.messages).toEqual([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Q: What is 2+2?' }]);
    // Text that only starts like a list is a prompt, as promptfoo posts text that is not JSON.
    expect(plain!.messages).toBeUndefined();
    expect(plain!.prompt).toBe('[draft] What is 2+2?');
    expect(summary.notes.map((n) => n.what)).toContain('chat prompts (1 vignettes)');
  });

  it('a conversation that cannot be posed is refused naming the prompt and the test, and nothing is written', async () => {
    const chat = JSON.stringify([{ role: 'user', content: '{{q}}' }, { role: 'assistant', content: 'Four.' }]);
    const out = join(tmp.dir, 'suite');
    await expect(runImport(request(configWith([chat]), out))).rejects.toThrow(/promptfooconfig\.yaml: prompt 1 x test case 1: the prompt's last message must be the user's/);
    expect(existsSync(out)).toBe(false);
    const tool = JSON.stringify([{ role: 'tool', content: 'x' }, { role: 'user', content: '{{q}}' }]);
    await expect(runImport(request(configWith([tool]), out))).rejects.toThrow(/prompt 1 x test case 1: prompt\.0\.role "tool" cannot be posed/);
  });
});

describe('what cannot be carried is said', () => {
  it('a file:// var is the file\'s text, as promptfoo loads it, alone or in a vars array', async () => {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    writeFileSync(join(tmp.dir, 'doc.txt'), 'The sky is blue.\n');
    writeFileSync(join(tmp.dir, 'doc2.md'), '# Grass\nGreen.');
    writeFileSync(config, "prompts: ['Summarise: {{doc}}']\ntests:\n  - vars: { doc: 'file://doc.txt' }\n  - vars: { doc: ['file://doc2.md', 'inline text'] }\n");
    const out = join(tmp.dir, 'suite');
    await runImport(request(config, out));
    expect((await manifestOf(out)).map((v) => v.prompt)).toEqual(['Summarise: The sky is blue.\n', 'Summarise: # Grass\nGreen.', 'Summarise: inline text']);
  });

  it("an assertion's transform, provider or other keys are listed as not carried over", async () => {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    writeFileSync(
      config,
      "prompts: ['Hi {{n}}']\ntests:\n  - vars: { n: a }\n    assert:\n      - { type: contains, value: a, transform: 'output.trim()' }\n      - { type: llm-rubric, value: Greets, provider: 'openai:gpt-4.1', rubricPrompt: 'x' }\n",
    );
    const summary = await runImport(request(config, join(tmp.dir, 'suite')));
    expect(summary.notes.map((n) => n.what)).toEqual(expect.arrayContaining(['assertion key "transform" (1 assertion)', 'assertion key "provider" (1 assertion)', 'assertion key "rubricPrompt" (1 assertion)']));
  });

  it('a .json prompt file is one conversation', async () => {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    writeFileSync(join(tmp.dir, 'chat.json'), JSON.stringify([{ role: 'system', content: 'Be brief.\n---\nReally.' }, { role: 'user', content: '{{q}}' }]));
    writeFileSync(config, "prompts: ['file://chat.json']\ntests:\n  - vars: { q: Why? }\n");
    const out = join(tmp.dir, 'suite');
    await runImport(request(config, out));
    const [v] = await manifestOf(out);
    expect(v!.messages).toEqual([{ role: 'system', content: 'Be brief.\n---\nReally.' }, { role: 'user', content: 'Why?' }]);
    expect(v!.id).toBe('chat.json:t1');
  });

  it("a test's own is-json schema: checked as JSON, and the fidelity report says its schema is not", async () => {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    writeFileSync(
      config,
      [
        'prompts: ["Give {{thing}} as JSON"]',
        'tests:',
        '  - vars: { thing: a city }',
        '    assert: [{ type: is-json, value: { type: object, required: [city] } }]',
        '  - vars: { thing: a number }',
        '    assert: [{ type: is-json, value: { type: number } }]',
        '  - vars: { thing: anything }',
        '    assert: [{ type: is-json }]',
      ].join('\n') + '\n',
    );
    const out = join(tmp.dir, 'suite');
    const summary = await runImport(request(config, out));
    expect(summary.notes.find((n) => n.what.startsWith('is-json with a schema'))).toMatchObject({ what: 'is-json with a schema of its own (2 tests)', why: expect.stringMatching(/checked as JSON only/) });
    const [city] = await manifestOf(out);
    expect((await verdict((await scorersOf(out)).get('promptfoo-assert')!, city!, '{"town": "Paris"}')).passed).toBe(true);
  });

  it('an is-json schema every test shares is a json rule, its schema checked', async () => {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    writeFileSync(config, ['prompts: ["Give {{thing}} as JSON"]', 'defaultTest:', '  assert: [{ type: is-json, value: { type: object, required: [city] } }]', 'tests:', '  - vars: { thing: a city }', '  - vars: { thing: a town }'].join('\n') + '\n');
    const out = join(tmp.dir, 'suite');
    const summary = await runImport(request(config, out));
    expect(summary.notes.filter((n) => n.what.startsWith('is-json'))).toEqual([]);
    const scoring = JSON.parse(readFileSync(join(out, 'scorers.json'), 'utf8')) as { scorers: Array<Record<string, unknown>> };
    expect(scoring.scorers).toEqual([{ name: 'is-json', type: 'json', schema: { type: 'object', required: ['city'] } }]);
  });
});

describe('bad input', () => {
  function failsWithNothingWritten(config: string, message: RegExp) {
    const out = join(tmp.dir, 'suite');
    return expect(runImport(request(config, out))).rejects.toThrow(message).then(() => {
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(tmp.dir).filter((f) => f.includes('suite'))).toEqual([]);
    });
  }

  it('a prompt naming an unknown var names the config, the prompt and the test', async () => {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    writeFileSync(config, "prompts: ['Hi {{name}}']\ntests:\n  - vars: { nom: x }\n");
    await failsWithNothingWritten(config, /promptfooconfig\.yaml: prompt 1 x test case 1: names the unknown var "name"/);
  });

  it('a missing test file and broken YAML name the file', async () => {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    writeFileSync(config, "prompts: ['Hi {{name}}']\ntests: file://nope.csv\n");
    await failsWithNothingWritten(config, /tests\.0: cannot read .*nope\.csv \(ENOENT\)/);
    writeFileSync(config, "prompts: ['Hi'\ntests: [\n");
    await failsWithNothingWritten(config, /promptfooconfig\.yaml:\d+: not valid YAML/);
  });

  it('a malformed inline test names its place and what is wrong', async () => {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    writeFileSync(config, "prompts: ['Hi {{name}}']\ntests:\n  - vars: { name: Ada }\n  - vars: { name: Bob }\n    assert:\n      - value: Bob\n");
    await failsWithNothingWritten(config, /promptfooconfig\.yaml: tests\.1: assert\.0\.type/);
  });

  it('a var computed by a script, or an image var, is refused naming the test and the var', async () => {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    writeFileSync(config, "prompts: ['Hi {{name}}']\ntests:\n  - vars: { name: 'file://name.py' }\n");
    await failsWithNothingWritten(config, /test 1, var name: .*name\.py: vars computed by a script cannot be imported/);
    writeFileSync(config, "prompts: ['Look: {{pic}}']\ntests:\n  - vars: { pic: 'file://cat.png' }\n");
    await failsWithNothingWritten(config, /test 1, var pic: .*cat\.png: an image or media var cannot be posed as text/);
    writeFileSync(config, "prompts: ['Hi {{name}}']\ntests:\n  - vars: { name: 'file://missing.txt' }\n");
    await failsWithNothingWritten(config, /test 1, var name: cannot read .*missing\.txt \(ENOENT\)/);
  });

  it('a malformed CSV row names its line', async () => {
    const config = join(tmp.dir, 'promptfooconfig.yaml');
    writeFileSync(config, "prompts: ['Hi {{name}}']\ntests: file://t.csv\n");
    writeFileSync(join(tmp.dir, 't.csv'), 'name,__expected\nAda,Ada\nBob,Bob,extra\n');
    await failsWithNothingWritten(config, /t\.csv:3: not valid CSV/);
  });

  it('refuses a destination that is not empty, and leaves it as it was', async () => {
    const out = join(tmp.dir, 'suite');
    mkdirSync(out);
    writeFileSync(join(out, 'keep.txt'), 'mine');
    await expect(runImport(request(join(FIXTURES, 'getting-started/promptfooconfig.yaml'), out))).rejects.toThrow(/exists and is not empty/);
    expect(readdirSync(out)).toEqual(['keep.txt']);
  });
});
