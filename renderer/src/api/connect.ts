/**
 * Start-up: inside Electron the preload's `window.panoptes` is used; in a browser, the bridge, with
 * the launch token that `panoptes serve --ui` put in the URL's fragment (`#token=...`). The token
 * is moved to localStorage (this origin's only) and wiped from the address bar at once, so it is
 * not left on screen or in the history, yet a reload, a run opened in a new tab or a bookmarked
 * address still finds it; a newer launch address replaces it.
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
    localStorage.setItem(TOKEN_KEY, fromUrl);
    window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}#/runs`);
    return fromUrl;
  }
  return localStorage.getItem(TOKEN_KEY);
}

/** The client for where the renderer runs; null in a browser opened without the launch URL. */
export function connect(): PanoptesClient | null {
  if (window.panoptes) return createIpcClient(window.panoptes);
  const token = takeLaunchToken();
  return token ? createBridgeClient(token) : null;
}
