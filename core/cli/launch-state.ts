/**
 * The browser app's address, kept per data folder: `npm start` (where Electron cannot start) serves
 * the app on the port and with the token it used last time, so a tab left open, a bookmark or a
 * run's address opened in a new tab keeps working across restarts. Kept in `<data-dir>/ui.json`
 * (mode 0600: the token is a credential). A file that is unreadable or malformed is ignored and
 * replaced; a saved port that another program took is given up for a free one.
 * Runs on: Node (core).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomicSync } from '../atomic-write.js';
import { MIN_TOKEN_LENGTH } from '../http/auth.js';

const LaunchStateSchema = z
  .object({
    port: z.number().int().min(1).max(65535),
    token: z.string().min(MIN_TOKEN_LENGTH).max(512),
  })
  .strict();
export type LaunchState = z.infer<typeof LaunchStateSchema>;

export function launchStatePath(dataDir: string): string {
  return join(dataDir, 'ui.json');
}

/** The saved port and token, or null when there are none (or the file is not ours to trust). */
export function readLaunchState(dataDir: string): LaunchState | null {
  let text: string;
  try {
    text = readFileSync(launchStatePath(dataDir), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = LaunchStateSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Saves the port and token (atomically: a crash leaves the old file or the new one). */
export function saveLaunchState(dataDir: string, state: LaunchState): void {
  const path = launchStatePath(dataDir);
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomicSync(path, JSON.stringify(LaunchStateSchema.parse(state)) + '\n', 0o600);
}
