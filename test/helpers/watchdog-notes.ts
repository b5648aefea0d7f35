/**
 * Where the suite's watchdog keeps its notes: a folder per vitest process, a file per worker
 * holding the test that worker is running (null between tests).
 * Runs on: Node (tests).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RunningTest {
  file: string;
  test: string | null;
}

export function watchdogDir(vitestPid: number): string {
  return join(tmpdir(), `panoptes-watchdog-${vitestPid}`);
}

export function runningTestNote(dir: string, workerPid: number): string {
  return join(dir, String(workerPid));
}

/** Every worker's note; a note half-written or gone is skipped. */
export function runningTests(dir: string): RunningTest[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: RunningTest[] = [];
  for (const name of names) {
    try {
      out.push(JSON.parse(readFileSync(join(dir, name), 'utf8')) as RunningTest);
    } catch {
      // written as we read, or gone: it names nothing
    }
  }
  return out;
}
