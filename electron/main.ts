/**
 * The desktop app's main process: opens the engine (store, scheduler, local worker, and the TCP
 * listener for remote workers when the settings ask for it), serves the renderer on
 * `app://panoptes/`, wires the contract to IPC, and owns the window and the app's lifecycle.
 * Deliberately thin: the policy lives in security.ts, the IPC in ipc.ts, the keys in secrets.ts,
 * the settings in settings.ts; everything they do is tested under Node.
 * Started by `npm start` (`panoptes desktop`), which builds better-sqlite3 for Electron's ABI and
 * passes its path in PANOPTES_NATIVE_BINDING; a packaged app carries it in resources/native/.
 * Runs on: Electron main.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  nativeTheme,
  protocol,
  safeStorage,
  session,
  shell,
  type MessageBoxOptions,
  type OpenDialogOptions,
  type SaveDialogOptions,
} from 'electron';
import type { Logger } from 'pino';
import { toPanoptesError } from '../core/domain.js';
import { defaultDataDir } from '../core/paths.js';
import { openEngine, type Engine } from '../core/service/engine.js';
import { loadCatalog } from '../core/service/load-catalog.js';
import { initTelemetry } from '../core/telemetry.js';
import { createAppProtocolHandler } from './app-protocol.js';
import { forwardEvents, ipcLayoutArgument, registerIpc } from './ipc.js';
import { menuTemplate } from './menu.js';
import { WORKER_TOKEN_ENV } from '../core/remote/listener-control.js';
import { apiKeyNames, applySecrets, importKeyFile, keychainTokenKeeper, SecretStore, type Secrets } from './secrets.js';
import { APP_ENTRY_URL, APP_SCHEME, guardSession, guardWebContents, secureWebPreferences } from './security.js';
import { ensureSettingsFile, loadSettings, type DesktopSettings } from './settings.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const PRELOAD = join(HERE, 'preload.cjs');
const RENDERER_DIR = join(HERE, '..', 'renderer');
/** Catalogs layered over the embedded one, passed by `panoptes desktop --catalog` as `--catalog=<path>`. */
const CATALOG_PATHS = process.argv.filter((a) => a.startsWith('--catalog=')).map((a) => a.slice('--catalog='.length));

interface Running {
  engine: Engine;
  settings: DesktopSettings;
  secrets: SecretStore;
  secretNames: Set<string>;
  /** Saved keys this process put into its environment (a relaunch must not inherit them as "set by the user"). */
  appliedSecrets: string[];
  disposeIpc: () => void;
  logger: Logger;
}

let running: Running | null = null;
let mainWindow: BrowserWindow | null = null;

// Before `ready`: the renderer's scheme must be privileged, and every renderer sandboxed.
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }]);
app.enableSandbox();
app.setName('Panoptes');

function fatal(err: unknown): void {
  const { message: why } = toPanoptesError(err);
  const hint = /NODE_MODULE_VERSION|compiled against a different/.test(why)
    ? '\n\nbetter-sqlite3 is not built for Electron: start the app with `npm start`, which builds it (scripts/electron-native.mjs).'
    : '';
  dialog.showErrorBox('Panoptes could not start', why + hint);
  app.exit(1);
}

/** The Electron-ABI better-sqlite3 addon: packaged beside the app, or built by `npm start`. */
function nativeBinding(): string | undefined {
  return app.isPackaged ? join(process.resourcesPath, 'native', 'better_sqlite3.node') : process.env.PANOPTES_NATIVE_BINDING;
}

// Dialogs are modal to the window when there is one.
function message(options: MessageBoxOptions): Promise<number> {
  const shown = mainWindow ? dialog.showMessageBox(mainWindow, options) : dialog.showMessageBox(options);
  return shown.then((r) => r.response);
}

async function openFile(options: OpenDialogOptions): Promise<string | null> {
  const pick = await (mainWindow ? dialog.showOpenDialog(mainWindow, options) : dialog.showOpenDialog(options));
  return pick.canceled ? null : (pick.filePaths[0] ?? null);
}

async function saveFile(options: SaveDialogOptions): Promise<string | null> {
  const pick = await (mainWindow ? dialog.showSaveDialog(mainWindow, options) : dialog.showSaveDialog(options));
  return pick.canceled || !pick.filePath ? null : pick.filePath;
}

/** Offers a restart so the engine reads the keys afresh; the new process gets the environment the user gave this one. */
async function offerRestart(r: Running, text: string, detail: string): Promise<void> {
  const choice = await message({ type: 'info', message: text, detail, buttons: ['Restart now', 'Later'] });
  if (choice !== 0) return;
  for (const name of r.appliedSecrets) delete process.env[name];
  app.relaunch();
  app.quit();
}

function savedSecrets(secrets: SecretStore, logger: Logger): Secrets {
  try {
    return secrets.load();
  } catch (err) {
    logger.warn({ err: toPanoptesError(err).message }, 'saved API keys could not be read');
    return {};
  }
}

async function importKeys(r: Running): Promise<void> {
  const unavailable = r.secrets.unavailableReason();
  if (unavailable !== null) {
    await message({ type: 'warning', message: 'API keys cannot be saved on this system', detail: `${unavailable}. Set them as environment variables instead.` });
    return;
  }
  const file = await openFile({ title: 'Import API keys from a .env file', properties: ['openFile', 'showHiddenFiles'] });
  if (file === null) return;
  try {
    const { accepted, ignored } = importKeyFile(readFileSync(file, 'utf8'), r.secretNames);
    const names = Object.keys(accepted);
    if (names.length === 0) {
      await message({
        type: 'warning',
        message: 'No keys were imported',
        detail: `${file} sets none of the variables this catalog's providers read (${[...r.secretNames].join(', ') || 'none'}).${ignored.length ? ` It sets: ${ignored.join(', ')}.` : ''}`,
      });
      return;
    }
    r.secrets.save({ ...savedSecrets(r.secrets, r.logger), ...accepted });
    r.logger.info({ keys: names, ignored }, 'API keys saved');
    await offerRestart(r, `Saved ${names.length === 1 ? 'a key' : `${names.length} keys`}: ${names.join(', ')}`, 'Panoptes restarts to use them.');
  } catch (err) {
    await message({ type: 'error', message: 'The keys were not saved', detail: toPanoptesError(err).message });
  }
}

async function forgetKeys(r: Running): Promise<void> {
  const choice = await message({ type: 'question', message: 'Forget every saved API key?', buttons: ['Forget', 'Cancel'], defaultId: 1, cancelId: 1 });
  if (choice !== 0) return;
  r.secrets.clear();
  r.logger.info('saved API keys forgotten');
  await offerRestart(r, 'The saved keys are gone.', 'Panoptes restarts without them (keys set in your environment stay).');
}

function chooseManifest(): Promise<string | null> {
  return openFile({
    title: 'Choose a manifest',
    properties: ['openFile'],
    filters: [
      { name: 'JSONL manifests', extensions: ['jsonl', 'ndjson', 'json', 'txt'] },
      { name: 'All files', extensions: ['*'] },
    ],
  });
}

function chooseExportPath(defaultName: string): Promise<string | null> {
  const csv = defaultName.toLowerCase().endsWith('.csv');
  return saveFile({
    title: 'Export responses',
    defaultPath: join(app.getPath('downloads'), defaultName),
    filters: [csv ? { name: 'CSV', extensions: ['csv'] } : { name: 'JSON Lines', extensions: ['jsonl'] }],
  });
}

/** Starts the worker listener at launch when settings.json asks for it (the Workers view starts it otherwise). */
async function startListenerFromSettings(engine: Engine, settings: DesktopSettings, logger: Logger): Promise<void> {
  const { enabled, host, port } = settings.workerListener;
  if (!enabled) return;
  try {
    const status = await engine.listener.start({ host, port });
    logger.info({ host: status.host, port: status.port }, 'accepting remote workers');
  } catch (err) {
    const why = toPanoptesError(err).message;
    logger.warn({ err: why }, 'worker listener not started');
    await message({ type: 'warning', message: 'Remote workers cannot connect', detail: why });
  }
}

function createWindow(r: Running): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 860,
    minWidth: 960,
    minHeight: 600,
    show: false,
    title: 'Panoptes',
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#111418' : '#ffffff',
    webPreferences: { ...secureWebPreferences(PRELOAD, [ipcLayoutArgument()]), devTools: !app.isPackaged },
  });
  const stopEvents = forwardEvents(r.engine.service, win.webContents);
  win.once('ready-to-show', () => win.show());
  win.on('closed', () => {
    stopEvents();
    if (mainWindow === win) mainWindow = null;
  });
  void win.loadURL(APP_ENTRY_URL);
  return win;
}

async function start(): Promise<void> {
  const logger = initTelemetry({ defaultLevel: 'info' });
  const userData = app.getPath('userData');
  const settingsFile = join(userData, 'settings.json');
  const { settings, problem } = loadSettings(settingsFile);
  if (problem) {
    logger.warn({ err: problem.message }, 'settings file ignored');
    void message({ type: 'warning', message: 'Settings file ignored (using the defaults)', detail: problem.message });
  }
  const dataDir = defaultDataDir();
  // Keys go into the environment before the engine (and its router) opens.
  const secrets = new SecretStore(join(userData, 'secrets.bin'), safeStorage);
  const keyNames = apiKeyNames(loadCatalog(dataDir, CATALOG_PATHS));
  const applied = applySecrets(process.env, savedSecrets(secrets, logger), keyNames);
  // The worker token is kept with the keys (and may be imported with them) but read by the listener from the keychain.
  const secretNames = new Set([...keyNames, WORKER_TOKEN_ENV]);
  if (applied.length > 0) logger.info({ keys: applied }, 'saved API keys in use');

  const binding = nativeBinding();
  const engine = openEngine({
    dataDir,
    catalogPaths: CATALOG_PATHS,
    logger,
    workerTokenKeeper: keychainTokenKeeper(secrets, WORKER_TOKEN_ENV),
    nativeBinding: binding,
  });

  guardSession(session.defaultSession, (url) => logger.warn({ url }, 'blocked a request from the renderer'));
  protocol.handle(APP_SCHEME, createAppProtocolHandler(RENDERER_DIR));
  const linkPolicy = { allowHttp: settings.allowHttpLinks };
  app.on('web-contents-created', (_event, contents) =>
    guardWebContents(contents, {
      policy: linkPolicy,
      openExternal: (url) => void shell.openExternal(url),
      onRefused: (what, url) => logger.warn({ what, url }, 'refused to leave the app'),
    }),
  );
  const disposeIpc = registerIpc({
    ipcMain,
    dispatcher: engine.dispatcher,
    desktop: { chooseManifest, chooseExportPath, openExternal: (url) => shell.openExternal(url) },
    linkPolicy,
    logger,
  });
  engine.start();
  const r: Running = { engine, settings, secrets, secretNames, appliedSecrets: applied, disposeIpc, logger };
  running = r;

  Menu.setApplicationMenu(
    Menu.buildFromTemplate(
      menuTemplate(process.platform, !app.isPackaged, {
        importKeys: () => void importKeys(r),
        forgetKeys: () => void forgetKeys(r),
        openSettingsFile: () => {
          ensureSettingsFile(settingsFile);
          void shell.openPath(settingsFile);
        },
        openDataFolder: () => void shell.openPath(dataDir),
      }),
    ),
  );
  mainWindow = createWindow(r);
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) mainWindow = createWindow(r);
  });
  await startListenerFromSettings(engine, settings, logger);
  logger.info({ dataDir }, 'desktop app ready');
}

/** Stops taking work and closes the store; running runs go back to the queue for the next start. */
async function stop(r: Running): Promise<void> {
  r.disposeIpc();
  await r.engine.close();
}

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    if (!mainWindow) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  let stopping: Promise<void> | null = null;
  let stopped = false;
  app.on('before-quit', (event) => {
    if (stopped || running === null) return;
    event.preventDefault();
    const r = running;
    stopping ??= stop(r)
      .catch((err: unknown) => r.logger.error({ err }, 'shutdown failed'))
      .finally(() => {
        stopped = true;
        app.quit();
      });
  });
  app.whenReady().then(start).catch(fatal);
}
