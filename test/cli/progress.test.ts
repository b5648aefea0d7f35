/**
 * The plain progress line (logs, CI) says which host a run waits for while one is down, and
 * nothing of the kind once it is back.
 * Runs on: Node (tests).
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgressReporter } from '../../core/cli/progress.js';
import type { RunSummary } from '../../core/service/contract.js';

function summary(over: Partial<RunSummary>): RunSummary {
  return {
    id: 'r1', status: 'running', manifestPath: 'm.jsonl', models: ['m'], epochs: 1, vignetteCount: 10, jobCount: 1, doneCount: 0,
    failedCount: 0, createdAt: 0, startedAt: 0, finishedAt: null, error: null, name: null, notes: null, tags: [], archivedAt: null, restarts: 0,
    options: { concurrency: 4, privacy: 'strict', skipPromptCache: false, shareCacheAcrossEpochs: false, sampling: {} },
    failedVignettes: 0, waitingForHost: null, inputTokens: 0, outputTokens: 0, calls: 0, estCostUsd: 0,
    cachedCalls: 0, cachedInputTokens: 0, cachedOutputTokens: 0, savedCostUsd: 0, judgeCostUsd: 0, retryCostUsd: 0, totalWithScoringUsd: 0,
    ...over,
  };
}

describe('plain progress lines', () => {
  it('name the host the run waits for, and stop once it is back', () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    const progress = createProgressReporter(out as unknown as NodeJS.WriteStream);
    progress.update(summary({ calls: 3, waitingForHost: { host: 'srv0/m', since: 1 } }));
    // The last call finishes the run: its line is written whatever the time since the previous one.
    progress.update(summary({ calls: 10 }));
    progress.stop();
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^progress: 3\/10 calls \(30%\), .*, waiting for host srv0\/m$/);
    expect(lines[1]).toMatch(/^progress: 10\/10 calls \(100%\), [^,]+, [^,]+, \$0\.00$/);
  });
});
