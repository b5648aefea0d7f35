import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunId } from '../../core/domain.js';
import type { RunSummary } from '../../core/service/contract.js';
import { EventHub, type EventSnapshots } from '../../core/service/event-hub.js';

// The hub's spacing is a property of its own clock, so it is tested on a fake one: the same check
// on the wall clock of a loaded machine measures the machine, not the hub.
describe('EventHub', () => {
  let snapshotReads = 0;
  const snapshots: EventSnapshots = {
    run: (runId) => {
      snapshotReads++;
      return { id: runId } as unknown as RunSummary;
    },
    job: () => null,
    usage: () => [],
    workers: () => [],
    scoring: () => ({}) as never,
  };

  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
    snapshotReads = 0;
  });
  afterEach(() => vi.useRealTimers());

  it('publishes one event per run per interval, however fast changes are marked', () => {
    const hub = new EventHub(snapshots, 100);
    const stamps: number[] = [];
    hub.subscribe((event) => {
      if (event.type === 'run') stamps.push(Date.now());
    });
    const run = 'run-1' as RunId;
    // A change every millisecond for two seconds: 2,000 marks.
    for (let ms = 0; ms < 2000; ms++) {
      hub.jobChanged(run, `job-${ms % 7}` as never);
      vi.advanceTimersByTime(1);
    }
    vi.advanceTimersByTime(200);
    expect(stamps.length).toBeGreaterThanOrEqual(19);
    expect(stamps.length).toBeLessThanOrEqual(21);
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]! - stamps[i - 1]!).toBeGreaterThanOrEqual(100);
    // Snapshots are read at publish time only, once per event.
    expect(snapshotReads).toBe(stamps.length);
    hub.close();
  });

  it('reads nothing and schedules nothing while no one listens', () => {
    const hub = new EventHub(snapshots, 100);
    hub.jobChanged('run-1' as RunId, 'job-1' as never);
    vi.advanceTimersByTime(500);
    expect(snapshotReads).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('flush publishes what waits at once, and a broken listener does not starve the others', () => {
    const hub = new EventHub(snapshots, 100);
    const seen: string[] = [];
    hub.subscribe(() => {
      throw new Error('broken subscriber');
    });
    hub.subscribe((event) => seen.push(event.type));
    hub.runChanged('run-1' as RunId);
    hub.workersChanged();
    hub.flush();
    expect(seen).toEqual(['run', 'workers']);
    expect(vi.getTimerCount()).toBe(0);
    hub.close();
  });
});
