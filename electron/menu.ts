/**
 * The application menu: the platform's standard menus (so copy, paste, zoom and quit behave as
 * users expect) and a Settings menu for what the renderer deliberately cannot reach: API keys
 * (imported from a .env file into the encrypted key store), the settings file and the data folder.
 * Runs on: Electron main.
 */
import type { MenuItemConstructorOptions } from 'electron';

export interface MenuActions {
  importKeys(): void;
  forgetKeys(): void;
  openSettingsFile(): void;
  openDataFolder(): void;
}

export function menuTemplate(platform: NodeJS.Platform, devTools: boolean, actions: MenuActions): MenuItemConstructorOptions[] {
  const settings: MenuItemConstructorOptions = {
    label: 'Settings',
    submenu: [
      { label: 'Import API keys from a .env file…', click: () => actions.importKeys() },
      { label: 'Forget saved API keys…', click: () => actions.forgetKeys() },
      { type: 'separator' },
      { label: 'Open settings file', click: () => actions.openSettingsFile() },
      { label: 'Open data folder', click: () => actions.openDataFolder() },
    ],
  };
  const view: MenuItemConstructorOptions = {
    label: 'View',
    submenu: [
      { role: 'reload' },
      ...(devTools ? [{ role: 'toggleDevTools' } as const] : []),
      { type: 'separator' },
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      { type: 'separator' },
      { role: 'togglefullscreen' },
    ],
  };
  return [
    ...(platform === 'darwin' ? [{ role: 'appMenu' } as const] : [{ role: 'fileMenu' } as const]),
    { role: 'editMenu' },
    view,
    settings,
    { role: 'windowMenu' },
  ];
}
