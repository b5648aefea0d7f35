/**
 * Live progress for a run on the terminal: a bar on a TTY, a plain line every few seconds
 * otherwise (logs, CI), each saying which host the run waits for while one is down. Fed by the
 * same run events the UI gets.
 * Runs on: Node (core).
 */
import cliProgress from 'cli-progress';
import type { RunSummary } from '../service/contract.js';
import { formatInt, formatUsd } from './common.js';

/** `<sep> waiting for host X` while the run's calls wait for a down host, else nothing. */
function waitingText(run: RunSummary, sep: string): string {
  return run.waitingForHost ? `${sep} waiting for host ${run.waitingForHost.host}` : '';
}

export interface ProgressReporter {
  update(run: RunSummary): void;
  stop(): void;
}

export function createProgressReporter(stream: NodeJS.WriteStream = process.stderr): ProgressReporter {
  const started = Date.now();
  const rate = (calls: number) => (calls / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(0);
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: ' {bar} {percentage}% | {value}/{total} calls | {rate}/s | {tokens} tokens | {cost} | ETA {eta_formatted}{waiting}',
        hideCursor: true,
        etaBuffer: 50,
        fps: 10,
      },
      cliProgress.Presets.shades_classic,
    );
    let begun = false;
    return {
      update(run) {
        const total = run.vignetteCount * run.jobCount;
        const payload = { rate: rate(run.calls), tokens: formatInt(run.inputTokens + run.outputTokens), cost: formatUsd(run.estCostUsd), waiting: waitingText(run, ' |') };
        if (!begun) {
          bar.start(total, run.calls, payload);
          begun = true;
        } else bar.update(run.calls, payload);
      },
      stop() {
        if (begun) bar.stop();
      },
    };
  }
  let lastLine = 0;
  return {
    update(run) {
      const now = Date.now();
      const total = run.vignetteCount * run.jobCount;
      const finished = run.calls >= total;
      if (now - lastLine < 2000 && !finished) return;
      lastLine = now;
      const pct = total === 0 ? 100 : Math.floor((run.calls / total) * 100);
      stream.write(`progress: ${run.calls}/${total} calls (${pct}%), ${rate(run.calls)}/s, ${formatInt(run.inputTokens + run.outputTokens)} tokens, ${formatUsd(run.estCostUsd)}${waitingText(run, ',')}\n`);
    },
    stop() {},
  };
}
