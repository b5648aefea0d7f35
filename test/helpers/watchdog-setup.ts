/**
 * The test each worker is running, written where the watchdog reporter (watchdog-reporter.ts, in
 * vitest's own process) finds it: a worker that blocks can no longer report anything, and vitest
 * sends test starts in batches, so this note, written before the test runs, is what names it.
 * Runs on: Node (tests).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach } from 'vitest';
import { runningTestNote, watchdogDir } from './watchdog-notes.js';

const dir = watchdogDir(process.ppid);
mkdirSync(dir, { recursive: true });
const note = runningTestNote(dir, process.pid);

beforeEach(({ task }) => writeFileSync(note, JSON.stringify({ file: task.file.filepath, test: task.fullTestName ?? task.name })));
afterEach(({ task }) => writeFileSync(note, JSON.stringify({ file: task.file.filepath, test: null })));
