/**
 * Stats: input and output tokens, calls and estimated cost per model, for one run or all runs, as
 * bar charts (recharts) with the same numbers in a table beside them; what the prompt cache answered
 * stands, lighter, beside what providers billed. One run's numbers follow
 * its events live; the all-runs totals are fetched again whenever a run ends.
 * Runs on: renderer.
 */
import { Bar, BarChart, CartesianGrid, LabelList, Tooltip, XAxis, YAxis } from 'recharts';
import { useClient } from '../api/client-context.js';
import type { ModelCost } from '../api/types.js';
import { ModelCostTable } from '../components/model-cost-table.js';
import { ScoringCosts } from '../components/scoring-costs.js';
import { EmptyState, ErrorNotice } from '../components/notice.js';
import { RunPicker } from '../components/run-picker.js';
import { useFetch } from '../components/use-fetch.js';
import { useRuns } from '../components/use-runs.js';
import { chartColor, useThemeColors, type ThemeColors } from '../components/use-theme-colors.js';
import { formatCompact, formatInt, formatUsd, formatUsdAxis } from '../format.js';
import { useAppStore } from '../state/app-store.js';
import { navigate } from '../state/hash-routes.js';

/**
 * Each chart sets what the prompt cache answered (lighter) beside what providers billed, so a re-run
 * served from the cache shows its tokens as cached instead of an empty chart.
 */
interface ChartSpec {
  key: string;
  title: string;
  billed: (m: ModelCost) => number;
  cached: (m: ModelCost) => number;
  billedName: string;
  cachedName: string;
  format: (n: number) => string;
  axis: (n: number) => string;
}

const CHARTS: ChartSpec[] = [
  { key: 'inputTokens', title: 'Input tokens', billed: (m) => m.inputTokens, cached: (m) => m.cachedInputTokens, billedName: 'billed', cachedName: 'from cache', format: formatInt, axis: formatCompact },
  { key: 'outputTokens', title: 'Output tokens', billed: (m) => m.outputTokens, cached: (m) => m.cachedOutputTokens, billedName: 'billed', cachedName: 'from cache', format: formatInt, axis: formatCompact },
  { key: 'calls', title: 'Calls', billed: (m) => m.calls - m.cachedCalls, cached: (m) => m.cachedCalls, billedName: 'to a provider', cachedName: 'from cache', format: formatInt, axis: formatCompact },
  { key: 'estCostUsd', title: 'Estimated cost (USD)', billed: (m) => m.estCostUsd, cached: (m) => m.savedCostUsd, billedName: 'spent', cachedName: 'saved by the cache', format: formatUsd, axis: formatUsdAxis },
];

/** Model names slant once three or more share the axis, so long ids never run into each other. */
const SLANT_FROM = 3;

function MetricChart({ models, chart, color, colors }: { models: readonly ModelCost[]; chart: ChartSpec; color: string; colors: ThemeColors }) {
  const data = models.map((m) => ({ model: m.model, billed: chart.billed(m), cached: chart.cached(m) }));
  const anyCached = data.some((d) => d.cached > 0);
  const slant = models.length >= SLANT_FROM;
  return (
    <div className="card chart-card" data-testid={`chart-${chart.key}`}>
      <h2 className="h3">{chart.title}</h2>
      <BarChart
        responsive
        style={{ width: '100%', height: slant ? 270 : 230 }}
        data={data}
        margin={{ top: 22, right: 8, bottom: 4, left: 8 }}
        accessibilityLayer
        title={`${chart.title} per model`}
      >
        <CartesianGrid vertical={false} stroke={colors.border} />
        <XAxis
          dataKey="model"
          tick={{ fill: colors.muted, fontSize: 12 }}
          stroke={colors.border}
          interval={0}
          {...(slant ? { angle: -30, textAnchor: 'end', height: 64 } : {})}
        />
        <YAxis tickFormatter={chart.axis} tick={{ fill: colors.muted, fontSize: 12 }} stroke={colors.border} width={56} />
        <Tooltip
          cursor={{ fill: colors['surface-2'] }}
          contentStyle={{ background: colors.surface, border: `1px solid ${colors.border}`, color: colors.text }}
          formatter={(value, name) => [chart.format(Number(value)), name === 'cached' ? chart.cachedName : chart.billedName]}
        />
        <Bar dataKey="billed" name={chart.billedName} fill={color} isAnimationActive={false} maxBarSize={64} radius={[3, 3, 0, 0]}>
          <LabelList dataKey="billed" position="top" fill={colors.text} fontSize={12} formatter={(value) => chart.format(Number(value))} />
        </Bar>
        {anyCached ? (
          <Bar dataKey="cached" name={chart.cachedName} fill={color} fillOpacity={0.35} stroke={color} isAnimationActive={false} maxBarSize={64} radius={[3, 3, 0, 0]}>
            <LabelList dataKey="cached" position="top" fill={colors.text} fontSize={12} formatter={(value) => chart.format(Number(value))} />
          </Bar>
        ) : null}
      </BarChart>
      {anyCached ? (
        <p className="muted small chart-legend" data-testid={`chart-${chart.key}-cached`}>
          Solid: {chart.billedName}; lighter: {chart.cachedName} ({chart.format(data.reduce((s, d) => s + d.cached, 0))})
        </p>
      ) : null}
    </div>
  );
}

function StatsTable({ models }: { models: readonly ModelCost[] }) {
  return (
    <div className="card">
      <ModelCostTable models={models} testId="stats-table" withTotal />
      <p className="muted small pad">
        Costs are estimates from the catalog's prices per million tokens. Calls answered from the prompt cache are billed to no
        one: their tokens and what they would have cost are counted apart.
      </p>
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
          <ScoringCosts stats={fetched.data} />
        </div>
      )}
    </section>
  );
}
