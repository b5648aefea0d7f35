/**
 * Fails after a draw from a seeded generator, so its failure must say the seed and how to replay it.
 * Runs on: Node (tests).
 */
import { expect, it } from 'vitest';
import { seededRandom } from '../../helpers/seeded-random.js';

it('draws, then fails', () => {
  const random = seededRandom('a draw that fails');
  expect(random.next()).toBe(2);
});
