/**
 * The desktop settings file: defaults when absent, partial files filled in, a malformed file
 * reported naming the field and the file while the defaults are used and the file is left alone.
 * Runs on: Node (tests).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, ensureSettingsFile, loadSettings } from '../../electron/settings.js';
import { tempDir } from '../helpers/temp.js';

describe('desktop settings', () => {
  let tmp: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    tmp = tempDir();
    file = join(tmp.dir, 'settings.json');
  });
  afterEach(() => tmp.cleanup());

  it('uses the defaults (https links only, no worker listener) when there is no file', () => {
    expect(loadSettings(file)).toEqual({ settings: DEFAULT_SETTINGS, problem: null });
    expect(DEFAULT_SETTINGS).toEqual({ allowHttpLinks: false, workerListener: { enabled: false, host: '127.0.0.1', port: 7878 } });
  });

  it('fills in what a partial file leaves out', () => {
    writeFileSync(file, JSON.stringify({ workerListener: { enabled: true, port: 9100 } }));
    expect(loadSettings(file)).toEqual({
      settings: { allowHttpLinks: false, workerListener: { enabled: true, host: '127.0.0.1', port: 9100 } },
      problem: null,
    });
  });

  it.each([
    [{ allowHttpLinks: 'yes' }, /allowHttpLinks/],
    [{ workerListener: { port: 70000 } }, /workerListener\.port/],
    [{ workerListener: { enabled: true, token: 'do-not-keep-secrets-here' } }, /workerListener: Unrecognized key: "token"/],
    [{ theme: 'dark' }, /Unrecognized key: "theme"/],
  ])('reports %j naming the field, uses the defaults and leaves the file alone', (content, why) => {
    const text = JSON.stringify(content);
    writeFileSync(file, text);
    const { settings, problem } = loadSettings(file);
    expect(settings).toEqual(DEFAULT_SETTINGS);
    expect(problem?.code).toBe('invalid_input');
    expect(problem?.where).toBe(file);
    expect(problem?.message).toContain(file);
    expect(problem?.message).toMatch(why);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('reports a file that is not JSON', () => {
    writeFileSync(file, '{ allowHttpLinks: true ');
    const { settings, problem } = loadSettings(file);
    expect(settings).toEqual(DEFAULT_SETTINGS);
    expect(problem?.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: not JSON`));
  });

  it('writes every field with its default for the user to edit, and never overwrites their file', () => {
    ensureSettingsFile(file);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(DEFAULT_SETTINGS);
    writeFileSync(file, '{"allowHttpLinks": true}');
    ensureSettingsFile(file);
    expect(loadSettings(file).settings.allowHttpLinks).toBe(true);
  });
});
