/**
 * One catalog model as a choice in New run: its id and label, providers, price, privacy, and, when
 * no worker can run it, why it cannot be ticked.
 * Runs on: renderer.
 */
import type { CatalogModelEntry } from '../api/types.js';
import { formatPrice } from '../format.js';

/** Why an unavailable model cannot be chosen; the models field repeats it when one is ticked. */
export const UNAVAILABLE_WHY = 'no worker can run it now (for a hosted model: its API key is not set)';

export function ModelOption({ model, checked, onToggle }: { model: CatalogModelEntry; checked: boolean; onToggle: () => void }) {
  const providers = [...new Set(model.hosts.map((h) => h.provider))].join(', ');
  // An unavailable model cannot be ticked; one already ticked (a default, say) can still be unticked.
  const disabled = !model.available && !checked;
  return (
    <label className={`model-option${checked ? ' checked' : ''}${disabled ? ' disabled' : ''}`} data-model={model.id}>
      <input type="checkbox" checked={checked} disabled={disabled} onChange={onToggle} aria-describedby={model.available ? undefined : `unavailable-${model.id}`} />
      <span className="model-main">
        <span className="model-id">{model.id}</span>
        <span className="model-label">{model.label}</span>
      </span>
      <span className="model-meta">
        <span className="muted">{providers}</span>
        <span className="price" title="USD per million tokens, input / output">
          {formatPrice(model.inputPerMTok)} / {formatPrice(model.outputPerMTok)} per MTok
        </span>
        {model.privacySafe ? (
          <span className="badge badge-ok" title="A host that neither trains on nor logs prompts">
            private
          </span>
        ) : (
          <span className="badge badge-warn" title="Every host of this model trains on or logs prompts">
            trains on prompts
          </span>
        )}
        {model.available ? null : (
          <span className="badge badge-muted" id={`unavailable-${model.id}`} title={`Unavailable: ${UNAVAILABLE_WHY}`}>
            unavailable<span className="visually-hidden">: {UNAVAILABLE_WHY}</span>
          </span>
        )}
      </span>
    </label>
  );
}
