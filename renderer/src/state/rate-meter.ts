/**
 * Throughput and ETA from the calls a run has made, sampled as events arrive: the rate over the
 * last few seconds, so the ETA follows the run's current pace rather than its average since start.
 * Runs on: renderer.
 */

const WINDOW_MS = 10_000;

export class RateMeter {
  private samples: Array<{ at: number; calls: number }> = [];

  add(at: number, calls: number): void {
    const last = this.samples[this.samples.length - 1];
    if (last && last.calls === calls) return;
    this.samples.push({ at, calls });
    while (this.samples.length > 2 && this.samples[0]!.at < at - WINDOW_MS) this.samples.shift();
  }

  /** Calls a second over the window, or null before there are two samples. */
  rate(): number | null {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last.at <= first.at) return null;
    return ((last.calls - first.calls) * 1000) / (last.at - first.at);
  }

  /** Milliseconds until `remaining` calls are made at the current rate, or null when unknown. */
  etaMs(remaining: number): number | null {
    const rate = this.rate();
    if (rate === null || rate <= 0) return null;
    return (remaining / rate) * 1000;
  }
}
