/**
 * New run's "until decided" section: pose the vignettes in a seeded order, a batch at a time, only
 * to the models still in contention, and stop when every pair is decided or the call budget is spent
 * (the run's `untilDecided`).
 * It keeps its own fields and tells the form what to send: nothing while it is off, the settings
 * when they are valid, 'invalid' (the form then refuses to create the run) when a field is wrong.
 * Runs on: renderer.
 */
import { useEffect, useState } from 'react';
import { DECIDE_BATCH, ORDER_SEED, wholeRangeText } from '../../../core/common/input-bounds.js';
import type { MethodInput } from '../api/types.js';
import { Field, controlProps } from './field.js';

export type UntilDecidedSettings = NonNullable<MethodInput<'createRun'>['untilDecided']>;
export type UntilDecidedChoice = UntilDecidedSettings | 'invalid' | undefined;

function number(text: string, min: number, max: number, whole: boolean, below = false): number | null | 'invalid' {
  if (text.trim() === '') return null;
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || (below ? n >= max : n > max) || (whole && !Number.isInteger(n))) return 'invalid';
  return n;
}

export function UntilDecidedFields({ scorers, models, onChange }: { scorers: readonly string[]; models: number; onChange: (choice: UntilDecidedChoice) => void }) {
  const [on, setOn] = useState(false);
  const [scorer, setScorer] = useState('');
  const [alpha, setAlpha] = useState('');
  const [margin, setMargin] = useState('');
  const [orderSeed, setOrderSeed] = useState('');
  const [batch, setBatch] = useState('');
  const [maxCalls, setMaxCalls] = useState('');
  const values = {
    alpha: number(alpha, 0.0001, 1, false, true),
    margin: number(margin, 0, 1, false, true),
    orderSeed: number(orderSeed, ORDER_SEED.min, ORDER_SEED.max, true),
    batch: number(batch, DECIDE_BATCH.min, DECIDE_BATCH.max, true),
    maxCalls: number(maxCalls, 1, Number.MAX_SAFE_INTEGER, true),
  };
  const errors = {
    alpha: values.alpha === 'invalid' ? 'a number above 0 and below 1, or blank for 0.05' : undefined,
    margin: values.margin === 'invalid' ? 'a number from 0 to below 1, or blank for 0 (never equivalent)' : undefined,
    orderSeed: values.orderSeed === 'invalid' ? `${wholeRangeText(ORDER_SEED)}, or blank for 1` : undefined,
    batch: values.batch === 'invalid' ? `${wholeRangeText(DECIDE_BATCH)}, or blank for 10` : undefined,
    maxCalls: values.maxCalls === 'invalid' ? 'a whole number of calls from 1, or blank for no budget' : undefined,
    scorers: on && scorers.length === 0 ? 'add scorers below: the pairs are decided on one' : on && models < 2 ? 'choose two models or more: pairs are compared' : undefined,
  };
  const invalid = Object.values(errors).some((e) => e !== undefined);
  const chosen = scorers.includes(scorer) ? scorer : '';
  const key = JSON.stringify([on, chosen, values, invalid]);
  useEffect(() => {
    if (!on) return onChange(undefined);
    if (invalid) return onChange('invalid');
    const settings: UntilDecidedSettings = {};
    if (chosen !== '') settings.scorer = chosen;
    for (const k of ['alpha', 'margin', 'orderSeed', 'batch', 'maxCalls'] as const) {
      const v = values[k];
      if (typeof v === 'number') settings[k] = v;
    }
    onChange(settings);
    // `key` says when the settings changed; the object itself is rebuilt on every render.
  }, [key]);

  return (
    <Field
      label="Until decided"
      name="until-decided"
      group
      error={errors.scorers}
      hint="Optional. Poses the vignettes in a seeded order, a batch at a time, only to the models still in contention, and stops once every pair of models is decided (an anytime-valid interval excludes 0) or equivalent, the manifest is spent, or the next batch would pass the call budget."
    >
      <label className="checkbox">
        <input type="checkbox" checked={on} onChange={(e) => setOn(e.target.checked)} data-testid="until-decided" /> Stop when every pair is decided
      </label>
      {on ? (
        <div className="field-row" data-testid="until-decided-fields">
          <Field label="Decide on scorer" name="decide-scorer" hint="Default: the first scorer.">
            <select {...controlProps('decide-scorer')} value={chosen} onChange={(e) => setScorer(e.target.value)} data-testid="decide-scorer">
              <option value="">(the first)</option>
              {scorers.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Alpha" name="decide-alpha" error={errors.alpha} hint="The chance of any wrong decision, split over the pairs (default 0.05).">
            <input type="text" inputMode="decimal" {...controlProps('decide-alpha', errors.alpha)} value={alpha} placeholder="0.05" onChange={(e) => setAlpha(e.target.value)} data-testid="decide-alpha" />
          </Field>
          <Field label="Equivalence margin" name="decide-margin" error={errors.margin} hint="Stop a pair as equivalent inside ±margin (default 0: never).">
            <input type="text" inputMode="decimal" {...controlProps('decide-margin', errors.margin)} value={margin} placeholder="0" onChange={(e) => setMargin(e.target.value)} data-testid="decide-margin" />
          </Field>
          <Field label="Order seed" name="decide-order-seed" error={errors.orderSeed} hint="Fixes the order before any answer (default 1); not the sampling seed.">
            <input type="text" inputMode="numeric" {...controlProps('decide-order-seed', errors.orderSeed)} value={orderSeed} placeholder="1" onChange={(e) => setOrderSeed(e.target.value)} data-testid="decide-order-seed" />
          </Field>
          <Field label="Batch" name="decide-batch" error={errors.batch} hint="Vignettes between two looks (default 10).">
            <input type="text" inputMode="numeric" {...controlProps('decide-batch', errors.batch)} value={batch} placeholder="10" onChange={(e) => setBatch(e.target.value)} data-testid="decide-batch" />
          </Field>
          <Field label="Call budget" name="decide-max-calls" error={errors.maxCalls} hint="The sweep's calls at most: no batch opens that would pass it (blank: none).">
            <input type="text" inputMode="numeric" {...controlProps('decide-max-calls', errors.maxCalls)} value={maxCalls} placeholder="none" onChange={(e) => setMaxCalls(e.target.value)} data-testid="decide-max-calls" />
          </Field>
        </div>
      ) : null}
    </Field>
  );
}
