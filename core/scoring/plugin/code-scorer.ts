/**
 * The second layer: code plugins. A `type: "code"` definition becomes a scorer whose `score(input)`
 * runs in the plugin's sandbox thread. Before a scoring file is accepted each plugin is loaded once
 * in a thread of its own, so one that does not compile or load is refused, naming the scorer; the
 * scorer's own thread starts on its first record. What a plugin returns is checked here: a number in [0, 1], a boolean, or
 * `{value, passed?, explanation?}`; anything else, or a throw, fails that record with the reason.
 * Runs on: Node (core).
 */
import { z } from 'zod';
import { PanoptesError, type ScorerKind } from '../../domain.js';
import { ScorerStopped, UnscorableRecord, type Scorer, type ScoreInput, type ScoreValue, type FailSeverity } from '../scorer.js';
import { ruleCheck } from '../rule-scorers.js';
import { RuleScorer, type ScorerBuilder, type ScorerCheck } from '../scorer-registry.js';
import { scorerVersion } from '../scorer-version.js';
import { BUILTIN_SOURCES } from './builtin-plugins.js';
import type { CodeDefinition } from './code-definition.js';
import { MAX_EXPLANATION } from './plugin-sandbox.js';
import { PluginThread } from './plugin-thread.js';
import { UrlHealthScorer } from './url-health.js';

/** What a plugin's `score` receives. */
interface PluginInput {
  response: string;
  target: string | null;
  metadata: Record<string, unknown>;
  vignetteId: string;
  prompt: string;
  model: string;
  epoch: number;
}

// A number JSON cannot hold (NaN, Infinity) comes back as its name; a value of another type as that type.
const Field = z.union([z.number(), z.string().max(MAX_EXPLANATION), z.boolean(), z.null(), z.object({ type: z.string().max(20) }).strict()]).optional();
const PluginResultSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('number'), value: z.union([z.number(), z.string()]) }).strict(),
  z.object({ kind: z.literal('boolean'), value: z.boolean() }).strict(),
  z.object({ kind: z.literal('object'), value: Field, passed: Field, explanation: Field }).strict(),
  z.object({ kind: z.literal('other'), type: z.string().max(20) }).strict(),
  z.object({ kind: z.literal('threw'), message: z.string().max(MAX_EXPLANATION) }).strict(),
]);
type Field = z.infer<typeof Field>;

const EXPECTED = 'score must return a number in [0, 1], a boolean, or {value, passed?, explanation?}';

function shown(v: Field): string {
  if (v !== null && typeof v === 'object') return `a${/^[aeiou]/.test(v.type) ? 'n' : ''} ${v.type}`;
  return v === undefined ? 'nothing' : typeof v === 'string' && !/^(NaN|-?Infinity)$/.test(v) ? JSON.stringify(v) : String(v);
}

/** What the plugin returned, as a score; an UnscorableRecord saying what was wrong with it. */
function pluginValue(returned: string, severity: FailSeverity): ScoreValue {
  let raw: unknown;
  try {
    raw = JSON.parse(returned);
  } catch {
    raw = undefined;
  }
  const parsed = PluginResultSchema.safeParse(raw);
  if (!parsed.success) throw new UnscorableRecord('its result could not be read back (was JSON replaced inside the plugin?)');
  const r = parsed.data;
  const failed = (passed: boolean | null) => (passed === false ? severity : 'none');
  switch (r.kind) {
    case 'boolean':
      return { value: r.value ? 1 : 0, passed: r.value, severity: failed(r.value), explanation: '', judge: null };
    case 'number':
      return { value: unitValue(r.value), passed: null, severity: 'none', explanation: '', judge: null };
    case 'threw':
      throw new UnscorableRecord(r.message);
    case 'other':
      throw new UnscorableRecord(r.type === 'promise' ? 'returned a promise: score must be synchronous' : `returned a${/^[aeiou]/.test(r.type) ? 'n' : ''} ${r.type}: ${EXPECTED}`);
    case 'object': {
      const value = typeof r.value === 'boolean' ? (r.value ? 1 : 0) : unitValue(r.value, 'value');
      if (r.passed !== undefined && r.passed !== null && typeof r.passed !== 'boolean') throw new UnscorableRecord(`passed is ${shown(r.passed)}, not a boolean`);
      if (r.explanation !== undefined && r.explanation !== null && typeof r.explanation !== 'string') {
        throw new UnscorableRecord(`explanation is ${shown(r.explanation)}, not a string`);
      }
      const passed = typeof r.passed === 'boolean' ? r.passed : typeof r.value === 'boolean' ? r.value : null;
      return { value, passed, severity: failed(passed), explanation: r.explanation ?? '', judge: null };
    }
  }
}

function unitValue(v: Field, what = 'returned'): number {
  if (typeof v === 'number' && v >= 0 && v <= 1) return v;
  const prefix = what === 'returned' ? 'returned' : `${what} is`;
  if (typeof v === 'number' || (typeof v === 'string' && /^(NaN|-?Infinity)$/.test(v))) throw new UnscorableRecord(`${prefix} ${shown(v)}, not a number in [0, 1]`);
  throw new UnscorableRecord(`${prefix} ${shown(v)}: ${EXPECTED}`);
}

class CodeScorer implements Scorer {
  readonly judges: readonly string[] = [];
  private thread: PluginThread | undefined;

  constructor(
    readonly name: string,
    readonly version: string,
    readonly kind: ScorerKind,
    private readonly source: string,
    private readonly filename: string,
    private readonly severity: FailSeverity,
  ) {}

  async score(input: ScoreInput): Promise<ScoreValue[]> {
    const payload: PluginInput = {
      response: input.response,
      target: input.vignette.target ?? null,
      metadata: input.vignette.metadata ?? {},
      vignetteId: input.vignette.id,
      prompt: input.vignette.prompt,
      model: input.model,
      epoch: input.epoch,
    };
    this.thread ??= new PluginThread(this.source, this.filename);
    const outcome = await this.thread.call(JSON.stringify(payload));
    if ('stopped' in outcome) throw new ScorerStopped(outcome.stopped);
    if ('error' in outcome) throw new UnscorableRecord(outcome.error);
    return [pluginValue(outcome.ok, this.severity)];
  }

  async close(): Promise<void> {
    await this.thread?.close();
    this.thread = undefined;
  }
}

/** What a process grants plugins beyond their record. */
export interface PluginGrants {
  /** Started allowing network access (`--allow-network`): the `url_health` built-in may run. */
  network: boolean;
}

/** Refuses a definition asking for what it may not have; true when it is the network's url_health. */
function usesNetwork(def: CodeDefinition, where: string, grants: PluginGrants): boolean {
  const asks = def.capabilities?.includes('network') === true;
  const field = `${where}.capabilities`;
  if (def.builtin === 'url_health' && !asks) {
    throw new PanoptesError('invalid_input', `${field}: the url_health built-in needs the "network" capability, which the scorer does not ask for`, { where: field });
  }
  if (!asks) return false;
  if (def.builtin !== 'url_health') {
    // A plugin's own code runs in the sandbox, which has no way out to the network.
    throw new PanoptesError('invalid_input', `${field}: only the url_health built-in can use the "network" capability`, { where: field });
  }
  if (!grants.network) {
    throw new PanoptesError('invalid_input', `${field}: the scorer asks for the "network" capability, and this process was not started allowing it (--allow-network)`, {
      where: field,
    });
  }
  return true;
}

/** The source a sandboxed definition runs, where it comes from (for messages), and how it scores. */
function pluginSource(def: CodeDefinition, where: string): { source: string; filename: string; kind: ScorerKind } {
  if (def.builtin !== undefined) {
    const builtin = BUILTIN_SOURCES[def.builtin];
    if (!builtin) throw new PanoptesError('invalid_input', `${where}.builtin: "${def.builtin}" is not available`, { where: `${where}.builtin` });
    return { source: builtin.source, filename: `builtin:${def.builtin}.js`, kind: builtin.kind };
  }
  if (def.code === undefined) {
    throw new PanoptesError(
      'invalid_input',
      `${where}.file: "${def.file ?? ''}" was not read; a plugin file is read with the scoring file by the CLI, elsewhere send its source as code`,
      { where: `${where}.file` },
    );
  }
  return { source: def.code, filename: def.file ?? `${def.name}.js`, kind: 'graded' };
}

/** The definition's field that gives its source, for errors. */
function sourceField(def: CodeDefinition): 'builtin' | 'file' | 'code' {
  return def.builtin !== undefined ? 'builtin' : def.file !== undefined ? 'file' : 'code';
}

/**
 * Loads the plugin in a sandbox thread of its own (its top-level code run, `score` found) and
 * stops it: a plugin that does not compile or load is refused before anything is stored, naming
 * the scorer and the field.
 */
export function checkCodeDefinition(grants: PluginGrants): ScorerCheck {
  return async (definition, where) => {
    if (definition.type !== 'code' || definition.builtin === 'json_parses' || usesNetwork(definition, where, grants)) return;
    const { source, filename } = pluginSource(definition, where);
    const thread = new PluginThread(source, filename);
    try {
      const error = await thread.load();
      const field = sourceField(definition);
      if (error) throw new PanoptesError('invalid_input', `${where}.${field}: the plugin "${definition.name}" does not load: ${error}`, { where: `${where}.${field}` });
    } finally {
      await thread.close();
    }
  };
}

/** The code layer's builder for the registry; a plugin's thread starts on its first record. */
export function codeScorerBuilder(grants: PluginGrants): ScorerBuilder {
  return (definition, version, where) => {
    if (definition.type !== 'code') throw new PanoptesError('invalid_input', `${where}: not a code definition`, { where });
    const severity = definition.severity ?? 'hard';
    if (usesNetwork(definition, where, grants)) return { scorer: new UrlHealthScorer(definition.name, version, severity), layer: 'plugin', definition };
    if (definition.builtin === 'json_parses') {
      // The json rule without a schema, run here: one definition of what counts as an answer's JSON.
      return { scorer: new RuleScorer(definition.name, version, ruleCheck({ name: definition.name, type: 'json' }, where), severity), layer: 'plugin', definition };
    }
    const { source, filename, kind } = pluginSource(definition, where);
    // A built-in's source is part of what it is: a change to it in Panoptes makes a new version.
    const v = definition.builtin !== undefined ? scorerVersion({ ...definition, code: source }) : version;
    return { scorer: new CodeScorer(definition.name, v, kind, source, filename, severity), layer: 'plugin', definition };
  };
}
