/**
 * Types of scripts/electron-native.mjs (the Electron-ABI better-sqlite3 build), for the tests and
 * for TypeScript callers.
 * Runs on: Node (build script).
 */
export declare const NATIVE_DIR: string;
export declare const ADDON_NAME: string;

export interface BuildTarget {
  electron: string;
  betterSqlite3: string;
  platform: string;
  arch: string;
}

export type Rebuild = (options: {
  buildPath: string;
  electronVersion: string;
  arch: string;
  onlyModules: string[];
  force: boolean;
}) => Promise<unknown>;

export declare function nativeBindingPath(root: string): string;
export declare function buildTarget(root: string): BuildTarget;
export declare function isUpToDate(root: string, target: BuildTarget): boolean;
export declare function buildElectronNative(options: {
  root: string;
  force?: boolean;
  rebuild?: Rebuild;
  log?: (line: string) => void;
}): Promise<{ path: string; built: boolean } & BuildTarget>;
