/**
 * Whether `panoptes desktop` can start Electron: its binary is on disk and (on Linux and the BSDs)
 * there is a display. The binary is found by path, as the electron package itself does
 * (node_modules/electron/path.txt + dist/, or ELECTRON_OVERRIDE_DIST_PATH), never by
 * `require('electron')`, which would try to download it. Decided over a probe of the machine, so
 * it can be decided for any machine.
 * Runs on: Node (core).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { packageRoot } from '../paths.js';

/** What the launch decision looks at, so it can be decided for any machine. */
export interface LaunchProbe {
  /** The package root (where node_modules/ and dist/ are). */
  root: string;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  exists(path: string): boolean;
  /** A file's text, or undefined when it cannot be read. */
  read(path: string): string | undefined;
}

export type DesktopPlan = { mode: 'electron'; binary: string } | { mode: 'browser'; reason: string };

export function nodeProbe(root: string = packageRoot()): LaunchProbe {
  return {
    root,
    env: process.env,
    platform: process.platform,
    exists: existsSync,
    read: (path) => {
      try {
        return readFileSync(path, 'utf8');
      } catch {
        return undefined;
      }
    },
  };
}

/** The Electron executable the electron package would run, or why there is none. */
export function findElectronBinary(probe: LaunchProbe): { binary: string } | { reason: string } {
  const pkg = join(probe.root, 'node_modules', 'electron');
  if (!probe.exists(join(pkg, 'package.json'))) return { reason: 'Electron is not installed (no node_modules/electron)' };
  const executable = probe.read(join(pkg, 'path.txt'))?.trim() || undefined;
  const override = probe.env.ELECTRON_OVERRIDE_DIST_PATH;
  if (override) {
    const binary = join(override, executable ?? 'electron');
    return probe.exists(binary) ? { binary } : { reason: `ELECTRON_OVERRIDE_DIST_PATH holds no Electron binary (${binary})` };
  }
  if (executable === undefined) return { reason: 'no Electron binary was downloaded (node_modules/electron/path.txt is missing)' };
  const binary = join(pkg, 'dist', executable);
  return probe.exists(binary) ? { binary } : { reason: `no Electron binary at ${relative(probe.root, binary)}` };
}

/** Linux and the BSDs draw windows through X11 or Wayland; macOS and Windows always have a screen. */
export function displayMissing(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | null {
  if (platform === 'darwin' || platform === 'win32') return null;
  return env.DISPLAY || env.WAYLAND_DISPLAY ? null : 'no display (neither DISPLAY nor WAYLAND_DISPLAY is set)';
}

export function planDesktopLaunch(probe: LaunchProbe): DesktopPlan {
  const found = findElectronBinary(probe);
  if ('reason' in found) return { mode: 'browser', reason: found.reason };
  const noDisplay = displayMissing(probe.env, probe.platform);
  if (noDisplay !== null) return { mode: 'browser', reason: noDisplay };
  return { mode: 'electron', binary: found.binary };
}
