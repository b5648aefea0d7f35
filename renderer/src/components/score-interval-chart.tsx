/**
 * Means with their 95 % intervals as an error-bar chart (recharts): one horizontal bar per entry,
 * the whisker spanning the interval. Models run down the side, so long names and many models still
 * fit a 900 px window. The Results view's leaderboard and the Compare view both draw with it; the
 * numbers themselves are in the table beside it, for screen readers and for copying.
 * Runs on: renderer.
 */
import { Bar, BarChart, CartesianGrid, Cell, ErrorBar, LabelList, Tooltip, XAxis, YAxis } from 'recharts';
import { formatInterval, formatScore } from '../../../core/common/score-format.js';
import { chartColor, useThemeColors } from './use-theme-colors.js';

export interface IntervalEntry {
  label: string;
  mean: number;
  ci95: [number, number] | null;
  /** Which colour of the chart palette (entries of one model share one). */
  colorIndex: number;
}

const ROW_HEIGHT = 34;

export function ScoreIntervalChart({ entries, title, testId }: { entries: readonly IntervalEntry[]; title: string; testId: string }) {
  const colors = useThemeColors();
  // The whisker is drawn as [mean − lo, hi − mean] around the bar's end; none without an interval.
  const data = entries.map((e) => ({
    ...e,
    whisker: e.ci95 ? [Math.max(0, e.mean - e.ci95[0]), Math.max(0, e.ci95[1] - e.mean)] : [0, 0],
  }));
  const longest = Math.max(...entries.map((e) => e.label.length), 4);
  return (
    <figure className="interval-chart" data-testid={testId} aria-label={title}>
      <BarChart
        layout="vertical"
        responsive
        style={{ width: '100%', height: 44 + ROW_HEIGHT * Math.max(entries.length, 1) }}
        data={data}
        margin={{ top: 6, right: 16, bottom: 4, left: 4 }}
        accessibilityLayer
      >
        <CartesianGrid horizontal={false} stroke={colors.border} />
        <XAxis type="number" domain={[0, 1]} ticks={[0, 0.25, 0.5, 0.75, 1]} tick={{ fill: colors.muted, fontSize: 12 }} stroke={colors.border} />
        <YAxis
          type="category"
          dataKey="label"
          tick={{ fill: colors.text, fontSize: 12 }}
          stroke={colors.border}
          width={Math.min(220, 12 + longest * 7)}
          interval={0}
        />
        <Tooltip
          cursor={{ fill: colors['surface-2'] }}
          contentStyle={{ background: colors.surface, border: `1px solid ${colors.border}`, color: colors.text }}
          formatter={(_value, _name, item) => {
            const entry = item.payload as IntervalEntry;
            return [`${formatScore(entry.mean)}  95% CI ${formatInterval(entry.ci95)}`, 'mean'];
          }}
        />
        <Bar dataKey="mean" isAnimationActive={false} maxBarSize={22} radius={[0, 3, 3, 0]}>
          {data.map((e) => (
            <Cell key={e.label} fill={chartColor(colors, e.colorIndex)} fillOpacity={0.55} />
          ))}
          <ErrorBar dataKey="whisker" width={6} strokeWidth={2} stroke={colors.text} isAnimationActive={false} />
          {/* Inside the bar's start, where the whisker never reaches. */}
          <LabelList dataKey="mean" position="insideLeft" offset={6} fill={colors.text} fontSize={12} formatter={(v) => formatScore(Number(v))} />
        </Bar>
      </BarChart>
      <figcaption className="muted small">{title}. Bars: mean; whiskers: 95 % confidence interval.</figcaption>
    </figure>
  );
}
