/**
 * Which view is open, kept in the URL's fragment (`#/runs/<id>`), so the browser's back button,
 * a reload and a shared link all land on the same view. No server round trip is involved, and
 * Electron loads the same page from disk.
 * Runs on: renderer.
 */
import { useSyncExternalStore } from 'react';

export type Route =
  | { view: 'runs' }
  /** `again`: the run whose settings fill the form (Run again). */
  | { view: 'new'; example: boolean; again?: string }
  | { view: 'run'; runId: string }
  | { view: 'stats'; runId: string | null }
  | { view: 'responses'; runId: string | null }
  | { view: 'export'; runId: string | null }
  | { view: 'results'; runId: string | null }
  | { view: 'compare'; runA: string | null; runB: string | null }
  | { view: 'workers' }
  | { view: 'models' }
  | { view: 'metrics' };

export type ViewName = Route['view'];

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [head, id, second] = parts;
  switch (head) {
    case 'new':
      return id === 'again' && second ? { view: 'new', example: false, again: second } : { view: 'new', example: id === 'example' };
    case 'runs':
      return id ? { view: 'run', runId: id } : { view: 'runs' };
    case 'stats':
    case 'responses':
    case 'export':
    case 'results':
      return { view: head, runId: id ?? null };
    case 'compare':
      // `-` holds run A's place while only run B is chosen.
      return { view: 'compare', runA: id && id !== '-' ? id : null, runB: second ?? null };
    case 'workers':
      return { view: 'workers' };
    case 'models':
      return { view: 'models' };
    case 'metrics':
      return { view: 'metrics' };
    default:
      return { view: 'runs' };
  }
}

export function routeHref(route: Route): string {
  switch (route.view) {
    case 'runs':
    case 'workers':
    case 'models':
    case 'metrics':
      return `#/${route.view}`;
    case 'new':
      return route.again !== undefined ? `#/new/again/${encodeURIComponent(route.again)}` : route.example ? '#/new/example' : '#/new';
    case 'run':
      return `#/runs/${encodeURIComponent(route.runId)}`;
    case 'stats':
    case 'responses':
    case 'export':
    case 'results':
      return route.runId === null ? `#/${route.view}` : `#/${route.view}/${encodeURIComponent(route.runId)}`;
    case 'compare': {
      const a = route.runA === null ? (route.runB === null ? '' : '/-') : `/${encodeURIComponent(route.runA)}`;
      const b = route.runB === null ? '' : `/${encodeURIComponent(route.runB)}`;
      return `#/compare${a}${b}`;
    }
  }
}

export function navigate(route: Route): void {
  window.location.hash = routeHref(route);
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

let cached: { hash: string; route: Route } | null = null;

function currentRoute(): Route {
  const hash = window.location.hash;
  if (cached?.hash !== hash) cached = { hash, route: parseRoute(hash) };
  return cached.route;
}

export function useRoute(): Route {
  return useSyncExternalStore(subscribe, currentRoute);
}
