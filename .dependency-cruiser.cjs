/**
 * The layer map of docs/ARCHITECTURE.md, checked by machine (`npm run lint`). Each layer may use
 * the layers below it and never one above; `core/` never reaches Electron or the renderer; the
 * renderer sees nothing of the engine but the contract's types.
 * Runs on: Node (tooling).
 */
const layer = (name, path, mayNotUse) => ({
  name,
  comment: `${path} is below ${mayNotUse.join(', ')}`,
  severity: 'error',
  from: { path },
  to: { path: `^(${mayNotUse.join('|')})/` },
});

const ABOVE_STORE = ['core/models', 'core/ingest', 'core/templates', 'core/workers', 'core/remote', 'core/scheduler', 'core/scoring', 'core/import', 'core/service', 'core/http', 'core/cli'];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-not-electron-or-renderer',
      comment: 'core/ is plain Node: it never imports Electron or the renderer',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^(electron|renderer)/|^node_modules/electron/' },
    },
    {
      name: 'renderer-sees-only-contract-types',
      comment: 'the renderer depends on the contract (and what it re-exports), as types only; values only from the browser-safe core/common/',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^(core|electron)/', pathNot: '^core/common/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'renderer-only-through-the-contract',
      comment: 'the renderer imports types from the contract file and values from core/common/, nowhere else in core',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^(core|electron)/', pathNot: '^core/service/contract\\.ts$|^core/common/' },
    },
    {
      name: 'common-is-browser-safe',
      comment: 'core/common/ runs in the renderer too: it imports nothing outside itself (no Node module, no layer) but the browser-safe yaml package',
      severity: 'error',
      from: { path: '^core/common/' },
      to: { pathNot: '^core/common/|^node_modules/yaml/' },
    },
    {
      name: 'base-is-the-bottom',
      comment: 'the vocabulary (core/*.ts) and core/concurrency use no layer',
      severity: 'error',
      from: { path: '^core/([^/]+\\.ts|concurrency/)' },
      to: { path: '^core/(store|models|ingest|templates|workers|remote|scheduler|scoring|import|service|http|cli)/' },
    },
    {
      name: 'sql-only-in-the-store',
      comment: 'only core/store/ holds a SQLite connection: every other part reaches the database through a room of the Store',
      severity: 'error',
      from: { pathNot: '^core/store/' },
      to: { path: '^node_modules/better-sqlite3/' },
    },
    layer('store-is-below-the-engine', '^core/store/', ABOVE_STORE),
    layer('models-are-below-workers', '^core/models/', ABOVE_STORE.filter((p) => p !== 'core/models')),
    layer('ingest-is-below-the-service', '^core/ingest/', ['core/store', 'core/workers', 'core/remote', 'core/scheduler', 'core/scoring', 'core/service', 'core/http', 'core/cli']),
    layer('templates-are-below-the-service', '^core/templates/', ['core/store', 'core/remote', 'core/scheduler', 'core/service', 'core/http', 'core/cli']),
    layer('workers-are-below-scheduling', '^core/workers/', ['core/ingest', 'core/templates', 'core/remote', 'core/scheduler', 'core/scoring', 'core/service', 'core/http', 'core/cli', 'core/store']),
    layer('remote-is-below-the-service', '^core/remote/', ['core/scheduler', 'core/scoring', 'core/service', 'core/http', 'core/cli', 'core/store']),
    layer('scheduler-is-below-the-service', '^core/scheduler/', ['core/remote', 'core/service', 'core/http', 'core/cli']),
    layer('scoring-is-below-the-service', '^core/scoring/', ['core/remote', 'core/import', 'core/service', 'core/http', 'core/cli']),
    layer('import-reads-files-only', '^core/import/', ['core/store', 'core/workers', 'core/remote', 'core/scheduler', 'core/service', 'core/http', 'core/cli']),
    layer('service-is-below-its-transports', '^core/service/', ['core/http', 'core/cli']),
    layer('http-is-not-the-cli', '^core/http/', ['core/cli']),
    {
      name: 'electron-stays-thin',
      comment: 'electron/ reaches the engine through the service and the remote listener only (types aside)',
      severity: 'error',
      from: { path: '^electron/' },
      to: { path: '^core/(store|scheduler|workers|models)/|^renderer/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|release|test-results)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.cts', '.mts'] },
  },
};
