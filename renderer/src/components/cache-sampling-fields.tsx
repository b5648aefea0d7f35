/**
 * New run's "Cache and sampling" fieldset: whether the prompt cache answers repeated prompts (and
 * across epochs), and the sampling options temperature, max tokens and seed, each blank for the
 * model's default. The form owns the values and their errors; this only shows and edits them.
 * Runs on: renderer.
 */
import { Field, controlProps } from './field.js';
import type { FieldErrors, FieldName } from './new-run-fields.js';

export interface CacheSamplingFieldsProps {
  useCache: boolean;
  setUseCache: (on: boolean) => void;
  shareCache: boolean;
  setShareCache: (on: boolean) => void;
  temperature: string;
  setTemperature: (text: string) => void;
  maxTokens: string;
  setMaxTokens: (text: string) => void;
  seed: string;
  setSeed: (text: string) => void;
  errors: FieldErrors;
  /** An edit clears the engine's error for that field: it was about the old value. */
  clearServerError: (field: FieldName) => void;
}

export function CacheSamplingFields({
  useCache,
  setUseCache,
  shareCache,
  setShareCache,
  temperature,
  setTemperature,
  maxTokens,
  setMaxTokens,
  seed,
  setSeed,
  errors,
  clearServerError,
}: CacheSamplingFieldsProps) {
  return (
    <fieldset className="field-set">
      <legend className="field-label">Cache and sampling</legend>
      <div className="field-row">
        <label className="check">
          <input type="checkbox" checked={useCache} data-testid="use-cache" onChange={(e) => setUseCache(e.target.checked)} />
          Answer a prompt asked before from the prompt cache (no call, no cost)
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={useCache && shareCache}
            disabled={!useCache}
            data-testid="share-cache"
            onChange={(e) => setShareCache(e.target.checked)}
          />
          Let later epochs reuse earlier epochs' answers
        </label>
      </div>
      <div className="field-row">
        <Field label="Temperature" name="temperature" error={errors.temperature} hint="0 to 2; blank: the model's default.">
          <input
            type="text"
            inputMode="decimal"
            data-testid="temperature"
            {...controlProps('temperature', errors.temperature)}
            value={temperature}
            onChange={(e) => {
              setTemperature(e.target.value);
              clearServerError('temperature');
            }}
          />
        </Field>
        <Field label="Max tokens" name="maxTokens" error={errors.maxTokens} hint="Longest answer, in tokens; blank: the model's default.">
          <input
            type="text"
            inputMode="numeric"
            data-testid="max-tokens"
            {...controlProps('maxTokens', errors.maxTokens)}
            value={maxTokens}
            onChange={(e) => {
              setMaxTokens(e.target.value);
              clearServerError('maxTokens');
            }}
          />
        </Field>
        <Field label="Seed" name="seed" error={errors.seed} hint="For providers that support repeatable sampling; blank: none.">
          <input
            type="text"
            inputMode="numeric"
            data-testid="seed"
            {...controlProps('seed', errors.seed)}
            value={seed}
            onChange={(e) => {
              setSeed(e.target.value);
              clearServerError('seed');
            }}
          />
        </Field>
      </div>
    </fieldset>
  );
}
