/**
 * The side-by-side table's shape (core/common/side-by-side.ts), which both of the app's
 * side-by-side views draw: models down (as given, else as they first appear), epochs across
 * ascending, a cell's records in sequence order, an empty cell empty.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { sideBySide } from '../../core/common/side-by-side.js';

const rec = (model: string, epoch: number, seq: number) => ({ model, epoch, seq, response: `${model}/${epoch}/${seq}` });

describe('sideBySide', () => {
  it('puts each record in its (model, epoch) cell, in sequence order', () => {
    const records = [rec('b', 2, 5), rec('a', 3, 1), rec('b', 2, 2), rec('a', 1, 4)];
    const table = sideBySide(records);
    expect(table.models).toEqual(['b', 'a']);
    expect(table.epochs).toEqual([1, 2, 3]);
    expect(table.cell('b', 2).map((r) => r.seq)).toEqual([2, 5]);
    expect(table.cell('a', 2)).toEqual([]);
    expect(table.cell('nobody', 1)).toEqual([]);
  });

  it('keeps the rows it is given, models without records included', () => {
    const table = sideBySide([rec('a', 1, 1)], ['z', 'a']);
    expect(table.models).toEqual(['z', 'a']);
    expect(table.cell('z', 1)).toEqual([]);
    expect(sideBySide([]).epochs).toEqual([]);
  });
});
