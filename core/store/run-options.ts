/**
 * A run's options as the database holds them. Runs created before the prompt-cache option took its
 * present name stored it as `noStore`; they read back as `skipPromptCache`, so an old run resumed
 * today still skips the cache it was told to skip.
 * Runs on: Node (core).
 */
import type { RunOptions } from '../domain.js';

export function parseStoredRunOptions(json: string): RunOptions {
  const { noStore, ...stored } = JSON.parse(json) as RunOptions & { noStore?: boolean };
  return noStore === undefined ? stored : { ...stored, skipPromptCache: stored.skipPromptCache ?? noStore };
}
