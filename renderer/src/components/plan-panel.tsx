/**
 * New run's Plan panel: before the sweep, how many vignettes each design needs to detect a
 * difference at 80 % power (the contract's `plan`, from guessed accuracies or a pilot run), at 1, 2,
 * 3 and 5 epochs, with each design's calls, dollars and wall time (from guesses, the judges of the
 * form's scoring file counted), the cheapest marked, and plainly when the manifest is too small.
 * Runs on: renderer.
 */
import { useState } from 'react';
import { useClient } from '../api/client-context.js';
import type { MethodResult } from '../api/types.js';
import { formatDuration, formatInt, formatUsd } from '../format.js';
import { Field, controlProps } from './field.js';
import { ErrorNotice } from './notice.js';

type Plan = MethodResult<'plan'>;

/** `judges`: the judge models the form's scoring file asks, each once per record (a pilot's judges are its own). */
export function PlanPanel({ models, manifestPath, judges }: { models: readonly string[]; manifestPath: string | null; judges: readonly string[] }) {
  const client = useClient();
  const [delta, setDelta] = useState('0.1');
  const [accuracy, setAccuracy] = useState('');
  const [pilot, setPilot] = useState('');
  const [flipRate, setFlipRate] = useState('');
  const [power, setPower] = useState('');
  const [plan, setPlan] = useState<Plan | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const deltaN = Number(delta);
  const guesses = accuracy.trim() === '' ? [] : accuracy.split(',').map((s) => Number(s.trim()));
  const flipN = flipRate.trim() === '' ? undefined : Number(flipRate);
  const powerN = power.trim() === '' ? undefined : Number(power);
  const problem =
    !(deltaN > 0 && deltaN <= 1)
      ? 'the difference must be above 0 and at most 1'
      : flipN !== undefined && !(flipN >= 0 && flipN <= 1)
        ? 'the flip rate must be from 0 to 1, or blank'
      : powerN !== undefined && !(powerN > 0 && powerN < 1)
        ? 'the power must be above 0 and below 1, or blank for 0.8'
      : models.length < 2
        ? 'choose two models or more to plan a comparison'
        : pilot.trim() === '' && (guesses.length !== models.length || guesses.some((g) => !(g >= 0 && g <= 1)))
          ? `give ${models.length} accuracies from 0 to 1 (one per model, in order), or a pilot run`
          : null;

  const run = () => {
    if (problem) return;
    setBusy(true);
    setError(null);
    client
      .call('plan', {
        models: [...models],
        delta: deltaN,
        ...(pilot.trim() === '' ? { accuracy: guesses, ...(judges.length > 0 ? { judges: [...judges] } : {}) } : { fromRun: pilot.trim() }),
        ...(manifestPath ? { manifestPath } : {}),
        ...(flipN !== undefined ? { flipRate: flipN } : {}),
        ...(powerN !== undefined ? { power: powerN } : {}),
      })
      .then(setPlan, (err: unknown) => setError(err instanceof Error ? err : new Error(String(err))))
      .finally(() => setBusy(false));
  };

  return (
    <div className="card" data-testid="plan-panel">
      <header className="card-header">
        <h2 className="h3">Plan</h2>
        <span className="muted">how many vignettes and epochs detect a difference at {Math.round((powerN ?? 0.8) * 100)} % power (α 0.05 over the pairs)</span>
      </header>
      <div className="field-row">
        <Field label="Difference to detect" name="plan-delta">
          <input type="text" inputMode="decimal" {...controlProps('plan-delta')} value={delta} onChange={(e) => setDelta(e.target.value)} data-testid="plan-delta" />
        </Field>
        <Field label="Guessed accuracies" name="plan-accuracy" hint="One per model, in order: 0.8, 0.7">
          <input type="text" {...controlProps('plan-accuracy')} value={accuracy} onChange={(e) => setAccuracy(e.target.value)} data-testid="plan-accuracy" />
        </Field>
        <Field label="Or a pilot run" name="plan-pilot" hint="Its differences and epoch variance.">
          <input type="text" {...controlProps('plan-pilot')} value={pilot} onChange={(e) => setPilot(e.target.value)} data-testid="plan-pilot" />
        </Field>
        <Field label="Flip rate" name="plan-flip-rate" hint="How often two epochs of a vignette disagree; blank: epochs planned as no help.">
          <input type="text" inputMode="decimal" {...controlProps('plan-flip-rate')} value={flipRate} placeholder="none" onChange={(e) => setFlipRate(e.target.value)} data-testid="plan-flip-rate" />
        </Field>
        <Field label="Power" name="plan-power" hint="The chance to detect the difference (default 0.8).">
          <input type="text" inputMode="decimal" {...controlProps('plan-power')} value={power} placeholder="0.8" onChange={(e) => setPower(e.target.value)} data-testid="plan-power" />
        </Field>
      </div>
      <div className="form-actions">
        <button type="button" className="button" disabled={problem !== null || busy} onClick={run} data-testid="plan-run">
          {busy ? 'Planning…' : 'Plan'}
        </button>
        {problem ? <span className="muted">{problem}</span> : null}
      </div>
      <ErrorNotice error={error} title="Could not plan" />
      {plan ? <PlanGrid plan={plan} /> : null}
    </div>
  );
}

function PlanGrid({ plan }: { plan: Plan }) {
  return (
    <div data-testid="plan-grid">
      {plan.too_small ? (
        <p className="field-error" data-testid="plan-too-small">
          The manifest is too small to detect {plan.delta} at this power with any of these designs
          {plan.manifest_vignettes !== null && plan.vignettes_unlimited_epochs > plan.manifest_vignettes
            ? ` (about ${formatInt(plan.vignettes_unlimited_epochs)} vignettes would be needed even with unlimited epochs).`
            : `; more epochs than these could reach it (about ${formatInt(plan.vignettes_unlimited_epochs)} vignettes with unlimited epochs).`}
        </p>
      ) : null}
      <table className="table">
        <thead>
          <tr>
            <th>epochs</th>
            <th>vignettes</th>
            <th>calls</th>
            <th>tokens</th>
            <th>cost</th>
            <th>wall time</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {plan.designs.map((d) => (
            <tr key={d.epochs} data-testid={d.cheapest ? 'plan-cheapest' : undefined} className={d.cheapest ? 'selected' : undefined}>
              <td>{d.epochs}</td>
              <td>{formatInt(d.vignettes)}</td>
              <td>
                {formatInt(d.calls)}
                {d.judge_calls > 0 ? ` + ${formatInt(d.judge_calls)} judge` : ''}
              </td>
              <td>{d.tokens === null ? 'unknown' : formatInt(d.tokens)}</td>
              <td>{d.cost_usd === null ? 'unknown' : formatUsd(d.cost_usd)}</td>
              <td>{d.wall_seconds === null ? 'unknown' : formatDuration(d.wall_seconds * 1000)}</td>
              <td>{d.cheapest ? <strong>cheapest</strong> : d.feasible ? '' : <span className="muted">more than the manifest</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {plan.manifest_vignettes !== null ? (
        <p className="muted small" data-testid="plan-mde">
          At the manifest&apos;s {formatInt(plan.manifest_vignettes)} vignettes, the smallest difference detectable:{' '}
          {plan.mde_at_manifest.map((m) => `${m.epochs} epoch${m.epochs === 1 ? '' : 's'} ${m.mde === null ? 'none' : m.mde.toFixed(3)}`).join(', ')}.
        </p>
      ) : null}
      {plan.notes.map((n) => (
        <p key={n} className="muted small">
          {n}
        </p>
      ))}
    </div>
  );
}
