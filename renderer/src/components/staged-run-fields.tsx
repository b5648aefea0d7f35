/**
 * New run's "Template and reasoning" fieldset: a staged template (none, a built-in by name, or a
 * YAML file read in the browser and sent as its text), and the reasoning settings (effort for
 * OpenAI-compatible hosts, a thinking budget for Anthropic). It keeps its own values and hands the
 * form what they add to `createRun` (`stagedRunInput`); the engine checks them there with the
 * contract's schemas (a template's bad line, a budget under 1,024), and the form shows its error here.
 * Runs on: renderer.
 */
import { useEffect, useState } from 'react';
import type { MethodInput, ReasoningEffort } from '../api/types.js';

type CreateRunInput = MethodInput<'createRun'>;
import { Field, controlProps } from './field.js';
import type { FieldErrors, FieldName } from './new-run-fields.js';

const BUILTINS = ['repo_audit', 'panel_debate', 'design_doc', 'redteam'] as const;
const FROM_FILE = 'file';


/** What the fieldset adds to a run: the template's name or text, and the reasoning settings as typed. */
export interface StagedRunChoice {
  template?: string;
  reasoningEffort?: ReasoningEffort;
  /** As typed: the engine's schema judges it. */
  thinkingBudget?: string;
}

/** The createRun fields the choice adds, the form's own sampling merged in. */
export function stagedRunInput(choice: StagedRunChoice, sampling: NonNullable<CreateRunInput['sampling']>): Pick<CreateRunInput, 'template' | 'sampling'> {
  const budget = choice.thinkingBudget?.trim() ?? '';
  const merged = {
    ...sampling,
    ...(choice.reasoningEffort ? { reasoningEffort: choice.reasoningEffort } : {}),
    ...(budget === '' ? {} : { thinkingBudget: Number(budget) }),
  };
  return { ...(choice.template ? { template: choice.template } : {}), ...(Object.keys(merged).length > 0 ? { sampling: merged } : {}) };
}

export function StagedRunFields({
  onChange,
  errors,
  clearServerError,
  initial = null,
}: {
  onChange: (choice: StagedRunChoice) => void;
  errors: FieldErrors;
  clearServerError: (field: FieldName) => void;
  /** What Run again's draft fills in: a built-in's name, or a template's text shown as a file of the run's. */
  initial?: StagedRunChoice | null;
}) {
  const [kind, setKind] = useState('');
  const [file, setFile] = useState<{ name: string; text: string } | null>(null);
  const [fileError, setFileError] = useState<string | null>(null);
  const [effort, setEffort] = useState<ReasoningEffort | ''>('');
  const [budget, setBudget] = useState('');

  useEffect(() => {
    if (!initial) return;
    const builtin = (BUILTINS as readonly string[]).includes(initial.template ?? '');
    setKind(initial.template === undefined ? '' : builtin ? initial.template : FROM_FILE);
    setFile(initial.template === undefined || builtin ? null : { name: "the run's template", text: initial.template });
    setEffort(initial.reasoningEffort ?? '');
    setBudget(initial.thinkingBudget ?? '');
  }, [initial]);

  const template = kind === FROM_FILE ? file?.text : kind || undefined;
  useEffect(() => {
    onChange({
      ...(template ? { template } : {}),
      ...(effort ? { reasoningEffort: effort } : {}),
      ...(budget.trim() ? { thinkingBudget: budget } : {}),
    });
  }, [template, effort, budget, onChange]);

  const readFile = async (picked: File | undefined) => {
    clearServerError('template');
    setFileError(null);
    if (!picked) return setFile(null);
    try {
      setFile({ name: picked.name, text: await picked.text() });
    } catch (err) {
      setFile(null);
      setFileError(`could not read ${picked.name}: ${(err as Error).message}`);
    }
  };

  return (
    <fieldset className="field-set">
      <legend className="field-label">Template and reasoning</legend>
      <div className="field-row">
        <Field
          label="Template"
          name="template"
          error={errors.template ?? fileError}
          hint="Optional: pose each vignette through a template's stages (map, review, synthesize...); the record is the last stage's answer."
        >
          <select
            data-testid="template"
            {...controlProps('template', errors.template ?? fileError)}
            value={kind}
            onChange={(e) => {
              setKind(e.target.value);
              clearServerError('template');
            }}
          >
            <option value="">none: one call per vignette</option>
            {BUILTINS.map((b) => (
              <option key={b} value={b}>
                {b}
              </option>
            ))}
            <option value={FROM_FILE}>from a YAML file…</option>
          </select>
        </Field>
        {kind === FROM_FILE ? (
          <Field label="Template file" name="templateFile" hint={file ? `${file.name}: ${file.text.length} characters` : 'A template in YAML (or JSON).'}>
            <input
              type="file"
              accept=".yaml,.yml,.json,text/yaml,application/json"
              data-testid="template-file"
              {...controlProps('templateFile')}
              onChange={(e) => void readFile(e.target.files?.[0])}
            />
          </Field>
        ) : null}
      </div>
      <div className="field-row">
        <Field label="Reasoning effort" name="reasoningEffort" hint="Sent to OpenAI-compatible hosts as reasoning_effort; refused for a host that takes none.">
          <select data-testid="reasoning-effort" {...controlProps('reasoningEffort')} value={effort} onChange={(e) => setEffort(e.target.value as ReasoningEffort | '')}>
            <option value="">the model's default</option>
            <option value="low">low</option>
            <option value="medium">medium</option>
            <option value="high">high</option>
          </select>
        </Field>
        <Field label="Thinking budget" name="thinkingBudget" error={errors.thinkingBudget} hint="Tokens an Anthropic model may think (at least 1,024); blank: none.">
          <input
            type="text"
            inputMode="numeric"
            data-testid="thinking-budget"
            {...controlProps('thinkingBudget', errors.thinkingBudget)}
            value={budget}
            onChange={(e) => {
              setBudget(e.target.value);
              clearServerError('thinkingBudget');
            }}
          />
        </Field>
      </div>
    </fieldset>
  );
}
