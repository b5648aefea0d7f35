/**
 * The app's frame: the navigation, the event stream's state, and the view the URL names.
 * Runs on: renderer.
 */
import { useAppStore } from './state/app-store.js';
import { routeHref, useRoute, type Route, type ViewName } from './state/hash-routes.js';
import { CompareView } from './views/compare-view.js';
import { ExportView } from './views/export-view.js';
import { MetricsView } from './views/metrics-view.js';
import { ModelsView } from './views/models-view.js';
import { NewRunView } from './views/new-run-view.js';
import { ResponsesView } from './views/responses-view.js';
import { ResultsView } from './views/results-view.js';
import { RunView } from './views/run-view.js';
import { RunsView } from './views/runs-view.js';
import { StatsView } from './views/stats-view.js';
import { WorkersView } from './views/workers-view.js';

const NAV: Array<{ label: string; route: Route; active: ViewName[] }> = [
  { label: 'Runs', route: { view: 'runs' }, active: ['runs', 'run'] },
  { label: 'New run', route: { view: 'new', example: false }, active: ['new'] },
  { label: 'Results', route: { view: 'results', runId: null }, active: ['results'] },
  { label: 'Compare', route: { view: 'compare', runA: null, runB: null }, active: ['compare'] },
  { label: 'Stats', route: { view: 'stats', runId: null }, active: ['stats'] },
  { label: 'Responses', route: { view: 'responses', runId: null }, active: ['responses'] },
  { label: 'Export', route: { view: 'export', runId: null }, active: ['export'] },
  { label: 'Models', route: { view: 'models' }, active: ['models'] },
  { label: 'Metrics', route: { view: 'metrics' }, active: ['metrics'] },
  { label: 'Workers', route: { view: 'workers' }, active: ['workers'] },
];

const CONNECTION_LABEL = {
  open: 'live',
  connecting: 'connecting…',
  reconnecting: 'reconnecting…',
  unauthorized: 'token refused',
} as const;

function CurrentView({ route }: { route: Route }) {
  switch (route.view) {
    case 'runs':
      return <RunsView />;
    case 'new':
      return <NewRunView key={route.again ?? (route.example ? 'example' : 'blank')} example={route.example} again={route.again ?? null} />;
    case 'run':
      return <RunView key={route.runId} runId={route.runId} />;
    case 'stats':
      return <StatsView runId={route.runId} />;
    case 'responses':
      return <ResponsesView runId={route.runId} />;
    case 'export':
      return <ExportView runId={route.runId} />;
    case 'results':
      return <ResultsView runId={route.runId} />;
    case 'compare':
      return <CompareView runA={route.runA} runB={route.runB} />;
    case 'workers':
      return <WorkersView />;
    case 'models':
      return <ModelsView />;
    case 'metrics':
      return <MetricsView />;
  }
}

export function App() {
  const route = useRoute();
  const connection = useAppStore((s) => s.connection);
  return (
    <div className="app">
      <nav className="sidebar" aria-label="Views">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" />
          Panoptes
        </div>
        {NAV.map((item) => (
          <a
            key={item.label}
            href={routeHref(item.route)}
            className={`nav-link${item.active.includes(route.view) ? ' active' : ''}`}
            aria-current={item.active.includes(route.view) ? 'page' : undefined}
          >
            {item.label}
          </a>
        ))}
        <div className={`connection connection-${connection}`} data-testid="connection">
          <span className="dot" />
          {CONNECTION_LABEL[connection]}
        </div>
      </nav>
      <main className="main">
        {connection === 'unauthorized' ? (
          <div className="banner banner-error" role="alert" data-testid="token-refused">
            Panoptes restarted with a new access token, so this tab can no longer reach it. Open the address it printed
            when it started (the one ending in <span className="mono">#token=…</span>) in this tab; runs and their
            addresses work again from there. To keep one address across restarts, start it with{' '}
            <span className="mono">--token</span> or <span className="mono">PANOPTES_TOKEN</span> (<span className="mono">npm start</span>{' '}
            keeps one per data folder).
          </div>
        ) : null}
        {connection === 'reconnecting' ? (
          <div className="banner" role="status">
            The connection to Panoptes was lost; reconnecting. What you see may be out of date.
          </div>
        ) : null}
        <CurrentView route={route} />
      </main>
    </div>
  );
}
