/**
 * FrameBatcher: groups items (records, vignettes) into batches that each fit one frame, by count
 * and by encoded size, so a job of 100,000 vignettes travels as many modest frames instead of one
 * that no limit would allow. An item too large for any frame is refused with a clear error.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';
import { MAX_ITEMS_PER_FRAME } from './messages.js';

export interface FrameBudget {
  /** Items per batch. */
  maxItems: number;
  /** Encoded JSON bytes of the items per batch (the frame's envelope must fit beside them). */
  maxBytes: number;
}

/** The budget for items inside a frame of `maxFrameBytes` whose envelope takes `envelopeBytes`. */
export function budgetFor(maxFrameBytes: number, envelopeBytes: number): FrameBudget {
  return { maxItems: MAX_ITEMS_PER_FRAME, maxBytes: Math.max(1, maxFrameBytes - envelopeBytes - 64) };
}

export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

export class FrameBatcher<T> {
  private items: T[] = [];
  private bytes = 0;

  constructor(
    private readonly budget: FrameBudget,
    private readonly emit: (items: T[]) => void,
    /** What an item is called in the error when one alone is too large. */
    private readonly describe: (item: T) => string,
  ) {}

  get pending(): number {
    return this.items.length;
  }

  push(item: T): void {
    const size = jsonBytes(item) + 1; // and its comma
    if (size > this.budget.maxBytes) {
      throw new PanoptesError(
        'invalid_input',
        `${this.describe(item)} is ${size} bytes encoded, more than a frame carries (${this.budget.maxBytes}); raise the maximum frame size`,
        { where: 'frame', retryable: false },
      );
    }
    if (this.items.length >= this.budget.maxItems || this.bytes + size > this.budget.maxBytes) this.flush();
    this.items.push(item);
    this.bytes += size;
  }

  flush(): void {
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    this.bytes = 0;
    this.emit(items);
  }
}
