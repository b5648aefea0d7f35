/**
 * Stats: input and output tokens, calls and estimated cost per model, for one run or all runs, as
 * bar charts (recharts) with the same numbers in a table beside them. One run's numbers follow
 * its events live; the all-runs totals are fetched again whenever a run ends.
 * Runs on: renderer.
 */
import { Bar, BarChart, CartesianGrid, LabelList, Tooltip, XAxis, YAxis } from 'recharts';
import { useClient } from '../api/client-context.js';
import type { ModelCost } from '../api/types.js';
import { ModelCostTable } from '../components/model-cost-table.js';
import { EmptyState, ErrorNotice } from '../components/notice.js';
import { RunPicker } from '../components/run-picker.js';
import { useFetch } from '../components/use-fetch.js';
import { useRuns } from '../components/use-runs.js';
import { chartColor, useThemeColors, type ThemeColors } from '../components/use-theme-colors.js';
import { formatCompact, formatInt, formatUsd, formatUsdAxis } from '../format.js';
import { useAppStore } from '../state/app-store.js';
import { navigate } from '../state/router.js';

type MetricKey = 'inputTokens' | 'outputTokens' | 'calls' | 'estCostUsd';

const CHARTS: Array<{ key: MetricKey; title: string; format: (n: number) => string; axis: (n: number) => string }> = [
  { key: 'inputTokens', title: 'Input tokens', format: formatInt, axis: formatCompact },
  { key: 'outputTokens', title: 'Output tokens', format: formatInt, axis: formatCompact },
  { key: 'calls', title: 'Calls', format: formatInt, axis: formatCompact },
  { key: 'estCostUsd', title: 'Estimated cost (USD)', format: formatUsd, axis: formatUsdAxis },
];

function MetricChart({
  models,
  chart,
  color,
  colors,
}: {
  models: readonly ModelCost[];
  chart: (typeof CHARTS)[number];
  color: string;
  colors: ThemeColors;
}) {
  return (
    <div className="card chart-card" data-testid={`chart-${chart.key}`}>
      <h3>{chart.title}</h3>
      <BarChart responsive style={{ width: '100%', height: 230 }} data={[...models]} margin={{ top: 22, right: 8, bottom: 4, left: 8 }}>
        <CartesianGrid vertical={false} stroke={colors.border} />
        <XAxis dataKey="model" tick={{ fill: colors.muted, fontSize: 12 }} stroke={colors.border} interval={0} />
        <YAxis tickFormatter={chart.axis} tick={{ fill: colors.muted, fontSize: 12 }} stroke={colors.border} width={56} />
        <Tooltip
          cursor={{ fill: colors['surface-2'] }}
          contentStyle={{ background: colors.surface, border: `1px solid ${colors.border}`, color: colors.text }}
          formatter={(value) => [chart.format(Number(value)), chart.title]}
        />
        <Bar dataKey={chart.key} fill={color} isAnimationActive={false} maxBarSize={64} radius={[3, 3, 0, 0]}>
          <LabelList
            dataKey={chart.key}
            position="top"
            fill={colors.text}
            fontSize={12}
            formatter={(value) => chart.format(Number(value))}
          />
        </Bar>
      </BarChart>
    </div>
  );
}

function StatsTable({ models }: { models: readonly ModelCost[] }) {
  return (
    <div className="card">
      <ModelCostTable models={models} testId="stats-table" withTotal />
      <p className="muted small pad">Costs are estimates from the catalog's prices per million tokens.</p>
    </div>
  );
}

export function StatsView({ runId }: { runId: string | null }) {
  const client = useClient();
  const colors = useThemeColors();
  const { runs } = useRuns();
  const settled = useAppStore((s) => s.settled);
  const live = useAppStore((s) => (runId === null ? undefined : s.usage[runId]));
  const fetched = useFetch(() => client.call('stats', runId === null ? {} : { runId }), [client, runId, runId === null ? settled : 0]);
  const models = live ?? fetched.data?.models ?? [];

  return (
    <section className="view">
      <header className="view-header">
        <h1>Stats</h1>
        <RunPicker runs={runs} value={runId} allowAll onChange={(id) => navigate({ view: 'stats', runId: id })} />
      </header>
      <ErrorNotice error={fetched.error} title="Could not load the stats" />
      {models.length === 0 && !fetched.loading ? (
        <EmptyState title="No calls yet">
          <p>Token usage appears here as soon as a run records its first response.</p>
        </EmptyState>
      ) : (
        <div className="stats-layout">
          <div className="chart-grid">
            {CHARTS.map((chart, i) => (
              <MetricChart key={chart.key} models={models} chart={chart} color={chartColor(colors, i)} colors={colors} />
            ))}
          </div>
          <StatsTable models={models} />
        </div>
      )}
    </section>
  );
}
