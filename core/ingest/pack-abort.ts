/**
 * How a pack is stopped part way: a caller's AbortSignal (the app's Cancel, a time limit) is looked
 * at between steps (a folder read, a file, a batch counted), and the pack ends with the signal's
 * reason when that is a PanoptesError (which says why), or a plain "cancelled" otherwise.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';

/** Why the signal stopped the pack, as the error the pack ends with. */
export function abortReason(signal: AbortSignal): PanoptesError {
  return signal.reason instanceof PanoptesError ? signal.reason : new PanoptesError('cancelled', 'the pack was cancelled', { where: 'packId' });
}

/** Throws the signal's reason once it has fired; does nothing without a signal. */
export function throwIfStopped(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}
