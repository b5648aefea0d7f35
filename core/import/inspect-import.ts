/**
 * `panoptes import inspect FILE`: an inspect_ai dataset (JSON array, JSONL or CSV) of Samples —
 * `input` (a string or chat messages), `target` (a string or a list), `choices`, `id`, `metadata`
 * — as vignettes, with `--field input=question,target=answer` naming other columns as inspect's
 * FieldSpec does. Chat inputs become chat vignettes; choices are rendered into the prompt with
 * inspect's multiple_choice template and scored with the `choice` rule.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';
import { chatTurns } from './chat-turns.js';
import type { FidelityNote, ImportOutcome, ImportedVignette, VignetteSink } from './imported-suite.js';
import { plainValue } from './table-import.js';
import { formatOfName, tableRows } from './table-rows.js';

export const SAMPLE_FIELDS = ['input', 'target', 'id', 'choices', 'metadata'] as const;
export type SampleField = (typeof SAMPLE_FIELDS)[number];

/** `input=question,target=answer` as a map from Sample field to column. */
export function parseFieldSpec(spec: string | undefined): Partial<Record<SampleField, string>> {
  const map: Partial<Record<SampleField, string>> = {};
  for (const pair of (spec ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const [field, column] = pair.split('=').map((s) => s.trim());
    if (!SAMPLE_FIELDS.includes(field as SampleField) || !column) {
      throw new PanoptesError('invalid_input', `--field: "${pair}" is not FIELD=COLUMN with FIELD one of ${SAMPLE_FIELDS.join(', ')}`, { where: '--field' });
    }
    map[field as SampleField] = column;
  }
  return map;
}

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** inspect_ai's multiple_choice template (single answer). */
function multipleChoicePrompt(question: string, choices: string[]): string {
  const letters = LETTERS.slice(0, choices.length).split('');
  return `Answer the following multiple choice question. The entire content of your response should be of the following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of ${letters.join(',')}.\n\n${question}\n\n${choices.map((c, i) => `${letters[i]}) ${c}`).join('\n')}`;
}


/** A cell's JSON text parsed (a CSV column holding a list or an object), or undefined when it is not JSON. */
function parsedCell(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function asList(value: unknown, where: string, field: string): string[] {
  if (typeof value === 'string') {
    // A string that only looks like a list (it does not parse) is one value.
    const list = value.trim().startsWith('[') ? parsedCell(value.trim()) : undefined;
    return list === undefined ? [value] : asList(list, where, field);
  }
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) return value.map(String);
  throw new PanoptesError('invalid_input', `${where}: "${field}" must be a string or a list of strings`, { where });
}

export async function importInspect(path: string, fieldSpec: string | undefined, sink: VignetteSink): Promise<ImportOutcome> {
  const fields = parseFieldSpec(fieldSpec);
  const col = (f: SampleField) => fields[f] ?? f;
  const format = formatOfName(path);
  if (format !== 'json' && format !== 'jsonl' && format !== 'csv') {
    throw new PanoptesError('invalid_input', `${path}: an inspect dataset is a .json, .jsonl or .csv file`, { where: path });
  }
  let n = 0;
  let withChoices = 0;
  let severalTargets = 0;
  let withTarget = 0;
  let chats = 0;
  let mostChoices = 0;
  let openWithTarget = 0;
  const ignored = new Set<string>();
  // Columns --field names that no row has yet: a misspelt one would import without its field.
  const unseen = new Map(Object.entries(fields).map(([field, column]) => [column, field]));
  for await (const { row: raw, where } of tableRows(path, format)) {
    const row = plainValue(raw) as Record<string, unknown>;
    n += 1;
    for (const column of unseen.keys()) if (Object.hasOwn(row, column)) unseen.delete(column);
    const input = row[col('input')];
    if (input === undefined || input === null || input === '') throw new PanoptesError('invalid_input', `${where}: no "${col('input')}" (the Sample's input)`, { where });
    const choices = row[col('choices')] === undefined || row[col('choices')] === null || row[col('choices')] === '' ? undefined : asList(row[col('choices')], where, col('choices'));
    const id = row[col('id')];
    const v: ImportedVignette = { id: id === undefined || id === null || id === '' ? String(n) : String(id as string | number) };
    if (typeof input === 'string') v.prompt = choices ? multipleChoicePrompt(input, choices) : input;
    else if (Array.isArray(input)) {
      const turns = chatTurns(input, where, 'input');
      if (choices) turns[turns.length - 1] = { role: 'user', content: multipleChoicePrompt(turns.at(-1)!.content, choices) };
      v.messages = turns;
      chats += 1;
    } else throw new PanoptesError('invalid_input', `${where}: "${col('input')}" must be a string or a list of chat messages`, { where });
    const target = row[col('target')];
    if (target !== undefined && target !== null && target !== '') {
      const targets = asList(target, where, col('target'));
      if (targets.length > 0) {
        v.target = targets[0]!;
        withTarget += 1;
      }
      if (targets.length > 1) severalTargets += 1;
      if (targets.length > 1) (v.metadata ??= {}).targets = targets;
      if (!choices && targets.length > 0) openWithTarget += 1;
    }
    if (choices) {
      (v.metadata ??= {}).choices = choices;
      withChoices += 1;
      mostChoices = Math.max(mostChoices, choices.length);
    }
    const meta = row[col('metadata')];
    if (meta !== undefined && meta !== null && meta !== '') {
      const parsed = typeof meta === 'string' ? parsedCell(meta) : meta;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new PanoptesError('invalid_input', `${where}: "${col('metadata')}" must be an object${typeof meta === 'string' ? ' (a JSON object in a CSV cell)' : ''}`, { where });
      }
      v.metadata = { ...(parsed as Record<string, unknown>), ...(v.metadata ?? {}) };
    }
    const used = new Set(SAMPLE_FIELDS.map(col));
    for (const k of Object.keys(row)) if (!used.has(k)) ignored.add(k);
    await sink(v, where);
  }
  if (unseen.size > 0) {
    const [column, field] = [...unseen][0]!;
    throw new PanoptesError('invalid_input', `--field ${field}=${column}: ${path} has no column "${column}" in any of its ${n} rows`, { where: '--field' });
  }
  const notes: FidelityNote[] = [];
  for (const k of ignored) notes.push({ what: `field "${k}"`, why: 'not a Sample field (sandbox, files and setup are not carried over); map it with --field if it is one' });
  if (withChoices > 0) notes.push({ what: `choices (${withChoices} samples)`, why: "rendered into the prompt with inspect's multiple_choice template (one answer, letters A, B, ...), scored by the choice rule" });
  if (withChoices > 0 && openWithTarget > 0) {
    notes.push({ what: `samples without choices (${openWithTarget})`, why: 'the one scorer is the choice rule, which reads a letter: these samples can never pass it; import them apart to score them with match' });
  }
  if (severalTargets > 0) notes.push({ what: `several targets (${severalTargets} samples)`, why: 'the first is the target; all are in metadata.targets' });
  if (chats > 0) notes.push({ what: `chat inputs (${chats} samples)`, why: 'posed as chat vignettes (messages)' });
  const letters = LETTERS.slice(0, Math.max(mostChoices, 2)).split('');
  const scorers = withTarget === 0 ? [] : withChoices > 0 ? [{ name: 'choice', type: 'choice' as const, choices: letters }] : [{ name: 'match', type: 'match' as const }];
  return { scorers, notes };
}
