/**
 * A test that blocks its worker for good, for the watchdog's own test (never part of the suite:
 * vitest's include takes only *.test.ts). Its 500 ms timeout can never fire: the loop never yields.
 * Runs on: Node (tests).
 */
import { it } from 'vitest';

it('spins for ever', () => {
  for (;;) {
    // Nothing: the event loop never gets a turn.
  }
}, 500);
