/**
 * The theme's colours as values, for what is drawn in script (the job grid's canvas, the charts),
 * re-read when the system switches between light and dark. The CSS variables in theme.css stay
 * the single source of the palette.
 * Runs on: renderer.
 */
import { useEffect, useState } from 'react';

const NAMES = [
  'bg', 'surface', 'surface-2', 'border', 'text', 'muted', 'accent',
  'job-pending', 'job-running', 'job-running-track', 'job-done', 'job-failed', 'job-cancelled', 'job-retried',
  'chart-1', 'chart-2', 'chart-3', 'chart-4', 'chart-5', 'chart-6', 'chart-7', 'chart-8',
] as const;

export type ThemeColors = Record<(typeof NAMES)[number], string>;

function readColors(): ThemeColors {
  const style = getComputedStyle(document.documentElement);
  return Object.fromEntries(NAMES.map((n) => [n, style.getPropertyValue(`--${n}`).trim()])) as ThemeColors;
}

export function chartColor(colors: ThemeColors, index: number): string {
  const palette = [colors['chart-1'], colors['chart-2'], colors['chart-3'], colors['chart-4'], colors['chart-5'], colors['chart-6'], colors['chart-7'], colors['chart-8']];
  return palette[index % palette.length]!;
}

export function useThemeColors(): ThemeColors {
  const [colors, setColors] = useState(readColors);
  useEffect(() => {
    const query = window.matchMedia('(prefers-color-scheme: dark)');
    const update = () => setColors(readColors());
    query.addEventListener('change', update);
    return () => query.removeEventListener('change', update);
  }, []);
  return colors;
}
