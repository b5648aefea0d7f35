/**
 * A form field: its label, the control, a hint, and — next to it — what is wrong with it.
 * Runs on: renderer.
 */
import type { ReactNode } from 'react';

export function Field({
  label,
  name,
  hint,
  error,
  children,
}: {
  label: string;
  name: string;
  hint?: ReactNode;
  error?: string | null;
  children: ReactNode;
}) {
  return (
    <div className={`field${error ? ' field-invalid' : ''}`} data-field={name}>
      <div className="field-label">{label}</div>
      {children}
      {error ? (
        <div className="field-error" role="alert" data-testid={`error-${name}`}>
          {error}
        </div>
      ) : hint ? (
        <div className="field-hint">{hint}</div>
      ) : null}
    </div>
  );
}
