/**
 * The desktop app's own settings: a small JSON file in userData (settings.json) that the user may
 * edit (Settings > Open settings file). Nothing secret lives here: keys and the worker token are
 * kept by the SecretStore. A malformed file is reported naming the field and the app runs on the
 * defaults; the file itself is never rewritten behind the user's back.
 * Runs on: Electron main.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { PanoptesError } from '../core/domain.js';
import { formatZodIssues } from '../core/validation.js';

export const DesktopSettingsSchema = z
  .object({
    /** Let plain http:// links open in the system browser (https only by default). */
    allowHttpLinks: z.boolean().default(false),
    /** Start the listener for `panoptes worker` processes at launch (the Workers view can start it any time; the token is kept in the OS keychain). */
    workerListener: z
      .object({
        enabled: z.boolean().default(false),
        /** 127.0.0.1: only this machine; 0.0.0.0: every interface. */
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(7878),
      })
      .strict()
      .default({ enabled: false, host: '127.0.0.1', port: 7878 }),
  })
  .strict();
export type DesktopSettings = z.infer<typeof DesktopSettingsSchema>;

export const DEFAULT_SETTINGS: DesktopSettings = DesktopSettingsSchema.parse({});

export interface LoadedSettings {
  settings: DesktopSettings;
  /** What was wrong with the file (the defaults are in use), or null. */
  problem: PanoptesError | null;
}

/** Reads settings.json; a missing file means the defaults. */
export function loadSettings(file: string): LoadedSettings {
  if (!existsSync(file)) return { settings: DEFAULT_SETTINGS, problem: null };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { settings: DEFAULT_SETTINGS, problem: new PanoptesError('invalid_input', `${file}: not JSON: ${why}`, { where: file }) };
  }
  const parsed = DesktopSettingsSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      settings: DEFAULT_SETTINGS,
      problem: new PanoptesError('invalid_input', `${file}: ${formatZodIssues(parsed.error)}`, { where: file }),
    };
  }
  return { settings: parsed.data, problem: null };
}

/** Writes the defaults when there is no settings file yet (so "Open settings file" shows every field). */
export function ensureSettingsFile(file: string): void {
  if (!existsSync(file)) writeFileSync(file, `${JSON.stringify(DEFAULT_SETTINGS, null, 2)}\n`, { flag: 'wx' });
}
