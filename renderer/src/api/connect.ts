/**
 * Start-up: inside Electron the preload's `window.panoptes` is used; in a browser, the bridge, with
 * the launch token that `panoptes serve --ui` put in the URL's fragment (`#token=...`). The token
 * is moved to sessionStorage and wiped from the address bar at once, so it survives a reload of
 * this tab but is not left on screen or in the history.
 * Runs on: renderer.
 */
import { createBridgeClient } from './bridge-client.js';
import type { PanoptesClient } from './client.js';
import { createIpcClient } from './ipc-client.js';

const TOKEN_KEY = 'panoptes.token';

/** The launch token from `#token=...` (kept for this tab), else the one kept earlier, else null. */
export function takeLaunchToken(): string | null {
  const fragment = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const fromUrl = fragment.get('token');
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}#/runs`);
    return fromUrl;
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

/** The client for where the renderer runs; null in a browser opened without the launch URL. */
export function connect(): PanoptesClient | null {
  if (window.panoptes) return createIpcClient(window.panoptes);
  const token = takeLaunchToken();
  return token ? createBridgeClient(token) : null;
}
