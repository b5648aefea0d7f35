/**
 * Which answer a side-by-side table highlights the others' differences against: by default the
 * first model's first epoch, another chosen in a select, or none (plain answers). Responses'
 * side-by-side panel and the Results cell dialog share it.
 * Runs on: renderer.
 */
import { useState, type ReactNode } from 'react';

interface Answered {
  seq: number;
  model: string;
  epoch: number;
  response: string;
}

const keyOf = (model: string, epoch: number) => `${model}\u0000${epoch}`;

export interface DiffReference {
  /** The chosen answer's text (null: none chosen, answers shown plain). */
  referenceText: string | null;
  /** Whether (model, epoch) is the answer the others are compared with. */
  isReference: (model: string, epoch: number) => boolean;
  /** The select, when there are two answers or more. */
  picker: ReactNode;
}

/** `first`: the (model, epoch) compared with until another is chosen, or null when there is no answer. */
export function useDiffReference(records: readonly Answered[], first: { model: string; epoch: number } | null): DiffReference {
  const [against, setAgainst] = useState<string | null>(null);
  const reference = against ?? (first ? keyOf(first.model, first.epoch) : '');
  const referenceText = reference === '' ? null : (records.findLast((r) => keyOf(r.model, r.epoch) === reference)?.response ?? null);
  const picker =
    records.length > 1 ? (
      <label className="inline-field sbs-against">
        <span>Highlight differences from</span>
        <select data-testid="diff-against" value={reference} onChange={(e) => setAgainst(e.target.value)}>
          <option value="">nothing (plain answers)</option>
          {records.map((r) => (
            <option key={r.seq} value={keyOf(r.model, r.epoch)}>
              {r.model}, epoch {r.epoch}
            </option>
          ))}
        </select>
      </label>
    ) : null;
  return { referenceText, isReference: (model, epoch) => reference === keyOf(model, epoch), picker };
}
