/**
 * A form field: its label, the control, a hint, and — next to it — what is wrong with it. The label
 * names the control for a screen reader (a <label> for one control, a labelled group for several),
 * and the hint or error describes it (`controlProps` gives a control the ids that tie them).
 * Runs on: renderer.
 */
import type { ReactNode } from 'react';

function ids(name: string) {
  return { control: `field-${name}`, label: `field-${name}-label`, note: `field-${name}-note` };
}

/** What a field's single control spreads on itself: its id, its description, whether it is invalid. */
export function controlProps(name: string, error?: string | null) {
  const id = ids(name);
  return { id: id.control, 'aria-describedby': id.note, 'aria-invalid': error ? true : undefined };
}

export function Field({
  label,
  name,
  hint,
  error,
  group = false,
  children,
}: {
  label: string;
  name: string;
  hint?: ReactNode;
  error?: string | null | undefined;
  /** Several controls (a list of checkboxes, a path and a button): a group named by the label. */
  group?: boolean;
  children: ReactNode;
}) {
  const id = ids(name);
  const note = error ? (
    <div className="field-error" role="alert" id={id.note} data-testid={`error-${name}`}>
      {error}
    </div>
  ) : hint ? (
    <div className="field-hint" id={id.note}>
      {hint}
    </div>
  ) : null;
  if (group) {
    return (
      <div className={`field${error ? ' field-invalid' : ''}`} data-field={name} role="group" aria-labelledby={id.label} aria-describedby={note ? id.note : undefined}>
        <div className="field-label" id={id.label}>
          {label}
        </div>
        {children}
        {note}
      </div>
    );
  }
  return (
    <div className={`field${error ? ' field-invalid' : ''}`} data-field={name}>
      <label className="field-label" id={id.label} htmlFor={id.control}>
        {label}
      </label>
      {children}
      {note}
    </div>
  );
}
