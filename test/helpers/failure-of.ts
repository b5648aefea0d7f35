/**
 * The PanoptesError a promise rejects with, for tests of refusals: the test fails if the promise
 * resolves, or rejects with anything else, so a refusal that never came cannot pass.
 * Runs on: Node (tests).
 */
import { expect } from 'vitest';
import { PanoptesError } from '../../core/domain.js';

export async function failureOf(p: Promise<unknown>): Promise<PanoptesError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PanoptesError);
  return err as PanoptesError;
}
