/**
 * `panoptes metrics`: the router's metrics over a window — totals per profile, per provider and
 * per host (calls, errors by code, p50/p95 latency, tokens, cost, cache hits) — for every profile
 * or one (`--profile`), as a table or as the `/metrics` JSON (`--json`).
 * Runs on: Node (core).
 */
import type { Command } from 'commander';
import type { CallAggregate, MetricsReport, ProfileAggregate } from '../../service/contract.js';
import { EXIT, addCommonOptions, formatInt, formatUsd, parsePositiveInt, printTable, reportError, type CommonOptions } from '../common.js';

interface MetricsCliOptions extends CommonOptions {
  profile?: string;
  model?: string;
  provider?: string;
  hours: number;
  json?: boolean;
}

export function registerMetricsCommand(program: Command): void {
  addCommonOptions(
    program
      .command('metrics')
      .description('model calls per profile, provider and host: calls, errors, latency, tokens, cost')
      .option('--profile <name>', 'only calls made under this profile')
      .option('--model <id>', 'only calls for this logical model')
      .option('--provider <name>', 'only calls to this provider')
      .option('--hours <n>', 'the window, in hours back from now', parsePositiveInt('--hours'), 24)
      .option('--json', 'print the /metrics JSON'),
  ).action(async (opts: MetricsCliOptions, cmd: Command) => {
    let engine;
    try {
      const { openCliEngine } = await import('../open-engine.js');
      engine = openCliEngine(opts);
      const report = await engine.service.metrics({
        since: Date.now() - opts.hours * 3_600_000,
        profile: opts.profile,
        model: opts.model,
        provider: opts.provider,
      });
      if (opts.json) process.stdout.write(JSON.stringify(report) + '\n');
      else printMetrics(report, opts.hours);
      cmd.setOptionValue('exit', EXIT.ok);
    } catch (err) {
      cmd.setOptionValue('exit', reportError(err));
    } finally {
      await engine?.close();
    }
  });
}

function printMetrics(report: MetricsReport, hours: number): void {
  const scope = report.profile === null ? 'every profile' : `profile "${report.profile}"`;
  if (report.profiles.length === 0) {
    process.stdout.write(`no model calls in the last ${hours} h (${scope})\n`);
    return;
  }
  process.stdout.write(`model calls in the last ${hours} h, ${scope}\n\n`);
  const header = ['calls', 'errors', 'p50 ms', 'p95 ms', 'input tokens', 'output tokens', 'cost', 'cache hits'];
  const cells = (a: ProfileAggregate | CallAggregate) => [
    formatInt(a.calls),
    errorsText(a.errors),
    formatInt(a.p50LatencyMs),
    formatInt(a.p95LatencyMs),
    formatInt(a.inputTokens),
    formatInt(a.outputTokens),
    formatUsd(a.costUsd),
    formatInt(a.cacheHits),
  ];
  printTable([['profile', ...header], ...report.profiles.map((p) => [p.profile, ...cells(p)])]);
  process.stdout.write('\n');
  printTable([['provider', ...header], ...report.providers.map((p) => [p.provider, ...cells(p)])]);
  process.stdout.write('\n');
  printTable([['host', ...header], ...report.hosts.map((h) => [h.host ?? h.provider, ...cells(h)])]);
}

/** Failed calls by code, e.g. `rate_limited 3, timeout 1`; `0` when none failed. */
function errorsText(errors: Record<string, number>): string {
  const parts = Object.entries(errors)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, n]) => `${code} ${n}`);
  return parts.length === 0 ? '0' : parts.join(', ');
}
