/**
 * What a report of prompt variants says once above its figures: each row is an arm (a model under
 * one variant), paired with every other arm by item. Nothing when the run has no variants.
 * Runs on: renderer.
 */
export function VariantsNote({ variants }: { variants: readonly string[] | undefined }) {
  if (!variants) return null;
  return (
    <p className="small" data-testid="report-variants">
      Prompt variants <strong>{variants.join(', ')}</strong>: each row is an arm, a model under one variant (<span className="mono">model · variant</span>),
      paired with every other arm by item <span className="muted">(metadata item)</span>.
    </p>
  );
}
