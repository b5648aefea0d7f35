/**
 * The budget windows a metrics report shows: for every (profile, provider) that has a daily
 * budget (the profile's own, else the provider's), the limits and what the rolling 24 h window
 * holds now (settled spend plus calls in flight). Profiles looked at: the router's own, `judge`
 * (judge calls run under it), and every profile the catalog names.
 * Runs on: Node (core).
 */
import type { Catalog } from '../catalog.js';
import { BUDGET_WINDOW_MS, type BudgetGuard } from './budget-guard.js';
import type { BudgetWindow } from './router-report.js';

export function budgetWindows(catalog: Catalog, guard: BudgetGuard, routerProfile: string, only?: string): BudgetWindow[] {
  const profiles = new Set([routerProfile, 'judge', ...Object.keys(catalog.data.profiles ?? {})]);
  const windows: BudgetWindow[] = [];
  for (const profile of profiles) {
    if (only !== undefined && profile !== only) continue;
    for (const provider of Object.keys(catalog.data.providers)) {
      const limit = catalog.termsOf(provider, profile).dailyBudget;
      if (limit === undefined) continue;
      windows.push({ profile, provider, windowMs: BUDGET_WINDOW_MS, limit: { ...limit }, used: guard.usage(profile, provider) });
    }
  }
  return windows;
}
