/**
 * `panoptes import inspect`: an inspect_ai dataset with chat inputs (text and content-part
 * messages), choices and list targets as chat vignettes and a choice scorer; CSV with a --field
 * mapping; bad samples named with their row, and nothing written.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runImport } from '../../core/import/run-import.js';
import { checkManifest } from '../../core/manifest.js';
import { tempDir } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

function importInspect(path: string, fields?: string) {
  return runImport({ source: 'inspect', path, outDir: join(tmp.dir, 'out'), promptfoo: { matchModel: () => undefined, judge: 'mock-judge' }, table: {}, fields });
}

function lines(): Array<Record<string, unknown>> {
  return readFileSync(join(tmp.dir, 'out', 'manifest.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('inspect datasets', () => {
  it('a JSONL of Samples: chat inputs become conversations, choices are rendered and scored by letter', async () => {
    const path = join(tmp.dir, 'samples.jsonl');
    const samples = [
      { id: 'q1', input: 'What is 2+2?', choices: ['3', '4', '5'], target: 'B', metadata: { subject: 'math' } },
      {
        id: 7,
        input: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Capital of France?' }] },
        ],
        target: ['Paris', 'paris'],
      },
      { input: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello!' }, { role: 'user', content: 'Name a colour.' }], choices: ['red', 'car'], target: 'A', sandbox: 'docker' },
    ];
    writeFileSync(path, samples.map((s) => JSON.stringify(s)).join('\n') + '\n');
    const summary = await importInspect(path);
    expect(summary.vignettes).toBe(3);
    const [mc, chat, mixed] = lines();
    expect(mc).toMatchObject({ id: 'q1', target: 'B', metadata: { subject: 'math', choices: ['3', '4', '5'] } });
    expect(mc!.prompt).toContain("where LETTER is one of A,B,C.\n\nWhat is 2+2?\n\nA) 3\nB) 4\nC) 5");
    expect(chat).toEqual({ id: '7', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Capital of France?' }], target: 'Paris', metadata: { targets: ['Paris', 'paris'] } });
    expect(mixed!.id).toBe('3');
    expect((mixed!.messages as Array<{ content: string }>).at(-1)!.content).toMatch(/Name a colour\.\n\nA\) red\nB\) car$/);
    expect(JSON.parse(readFileSync(join(tmp.dir, 'out', 'scorers.json'), 'utf8'))).toEqual({ scorers: [{ name: 'choice', type: 'choice', choices: ['A', 'B', 'C'] }] });
    // The chat sample has a target and no choices: the choice rule can never pass it, and the report says so.
    expect(summary.notes.map((n) => n.what)).toEqual(['field "sandbox"', 'choices (2 samples)', 'samples without choices (1)', 'several targets (1 samples)', 'chat inputs (2 samples)']);
    const check = await checkManifest(join(tmp.dir, 'out', 'manifest.jsonl'));
    expect(check.issues).toEqual([]);
  });

  it('a CSV with --field naming its columns', async () => {
    const path = join(tmp.dir, 'qa.csv');
    writeFileSync(path, 'qid,question,answer\na,Sky colour?,blue\nb,Grass colour?,green\n');
    await importInspect(path, 'input=question, target=answer, id=qid');
    expect(lines()).toEqual([
      { id: 'a', prompt: 'Sky colour?', target: 'blue' },
      { id: 'b', prompt: 'Grass colour?', target: 'green' },
    ]);
    expect(JSON.parse(readFileSync(join(tmp.dir, 'out', 'scorers.json'), 'utf8'))).toEqual({ scorers: [{ name: 'match', type: 'match' }] });
  });

  it.each([
    ['a tool message', [{ input: 'ok' }, { input: [{ role: 'tool', content: 'x' }, { role: 'user', content: 'y' }] }], /samples\.json item 2: input\.0\.role "tool" cannot be posed/],
    ['a conversation ending with the assistant', [{ input: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] }], /samples\.json item 1: the input's last message must be the user's/],
    ['an image part', [{ input: [{ role: 'user', content: [{ type: 'image', image: 'x.png' }] }] }], /item 1: input\.0\.content: a message content part of type "image"/],
    ['no input', [{ target: 'x' }], /samples\.json item 1: no "input"/],
  ])('%s is refused naming the sample, and nothing is written', async (_what, samples, message) => {
    const path = join(tmp.dir, 'samples.json');
    writeFileSync(path, JSON.stringify(samples));
    await expect(importInspect(path)).rejects.toThrow(message);
    expect(existsSync(join(tmp.dir, 'out'))).toBe(false);
  });

  it.each([
    ['metadata that is not JSON', 'input,metadata\nok,{}\nfine,"{not json"\n', /qa\.csv:3: "metadata" must be an object \(a JSON object in a CSV cell\)/],
    ['metadata that is a JSON list', 'input,metadata\nok,"[1,2]"\n', /qa\.csv:2: "metadata" must be an object/],
    ['a target list holding an object', 'input,target\nok,"[""a"",{""b"":1}]"\n', /qa\.csv:2: "target" must be a string or a list of strings/],
  ])('a CSV with %s is refused naming its row, and nothing is written', async (_what, csv, message) => {
    const path = join(tmp.dir, 'qa.csv');
    writeFileSync(path, csv);
    await expect(importInspect(path)).rejects.toThrow(message);
    expect(existsSync(join(tmp.dir, 'out'))).toBe(false);
  });

  it('a --field column no row has is refused naming the option and the file, and nothing is written', async () => {
    const path = join(tmp.dir, 'qa.csv');
    writeFileSync(path, 'qid,question,answer\na,Sky colour?,blue\n');
    await expect(importInspect(path, 'input=question,target=answr,id=qid')).rejects.toThrow(/--field target=answr: .*qa\.csv has no column "answr" in any of its 1 rows/);
    expect(existsSync(join(tmp.dir, 'out'))).toBe(false);
  });

  it('a --field column that only later samples have is taken', async () => {
    const path = join(tmp.dir, 'samples.jsonl');
    writeFileSync(path, [{ q: 'Hi?' }, { q: 'Sky?', a: 'blue' }].map((x) => JSON.stringify(x)).join('\n') + '\n');
    await importInspect(path, 'input=q,target=a');
    expect(lines()).toEqual([{ id: '1', prompt: 'Hi?' }, { id: '2', prompt: 'Sky?', target: 'blue' }]);
  });

  it('samples without choices beside multiple-choice ones are said to be unscorable by the choice rule', async () => {
    const path = join(tmp.dir, 'samples.jsonl');
    writeFileSync(path, [{ input: 'Pick.', choices: ['x', 'y'], target: 'A' }, { input: '2+2?', target: '4' }].map((x) => JSON.stringify(x)).join('\n') + '\n');
    const summary = await importInspect(path);
    expect(summary.notes.find((n) => n.what === 'samples without choices (1)')?.why).toMatch(/can never pass it/);
  });

  it('a CSV cell that only looks like a list is one target', async () => {
    const path = join(tmp.dir, 'qa.csv');
    writeFileSync(path, 'input,target\nWhich bracket?,[ left\n');
    await importInspect(path);
    expect(lines()).toEqual([{ id: '1', prompt: 'Which bracket?', target: '[ left' }]);
  });

  it('a bad --field is refused naming the option', async () => {
    const path = join(tmp.dir, 'samples.json');
    writeFileSync(path, '[{"input": "x"}]');
    await expect(importInspect(path, 'question')).rejects.toThrow(/--field: "question" is not FIELD=COLUMN/);
  });
});
