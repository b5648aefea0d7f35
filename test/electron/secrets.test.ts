/**
 * Saved API keys: encrypted at rest (a real AES-256-GCM cipher stands in for Electron's
 * safeStorage), refused where the OS offers no real encryption, readable only for the variable
 * names the catalog's providers declare, and put into the environment without overriding it.
 * Runs on: Node (tests).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PanoptesError } from '../../core/domain.js';
import { Catalog } from '../../core/models/catalog.js';
import { apiKeyNames, applySecrets, importKeyFile, keychainTokenKeeper, SecretStore, type Cipher } from '../../electron/secrets.js';
import { tempDir } from '../helpers/temp.js';

/** safeStorage's shape over a real cipher with a per-test key. */
function aesCipher(opts: { available?: boolean; backend?: ReturnType<Cipher['getSelectedStorageBackend']> } = {}): Cipher & { calls: string[] } {
  const key = randomBytes(32);
  const calls: string[] = [];
  return {
    calls,
    isEncryptionAvailable: () => opts.available ?? true,
    getSelectedStorageBackend: () => {
      calls.push('getSelectedStorageBackend');
      return opts.backend ?? 'gnome_libsecret';
    },
    encryptString(plain: string): Buffer {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return Buffer.concat([iv, c.getAuthTag(), body]);
    },
    decryptString(data: Buffer): string {
      const d = createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
      d.setAuthTag(data.subarray(12, 28));
      return Buffer.concat([d.update(data.subarray(28)), d.final()]).toString('utf8');
    },
  };
}

const OPENAI_KEY = 'sk-test-0123456789abcdefghijklmnop';

describe('SecretStore', () => {
  let tmp: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    tmp = tempDir();
    file = join(tmp.dir, 'secrets.bin');
  });
  afterEach(() => tmp.cleanup());

  it('round-trips keys through an owner-only file that holds no plain text', () => {
    const store = new SecretStore(file, aesCipher(), 'linux');
    expect(store.load()).toEqual({});
    store.save({ OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: 'sk-ant-xyz-123456789' });
    expect(store.load()).toEqual({ OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: 'sk-ant-xyz-123456789' });
    const bytes = readFileSync(file);
    expect(bytes.includes(Buffer.from(OPENAI_KEY))).toBe(false);
    expect(bytes.includes(Buffer.from('OPENAI_API_KEY'))).toBe(false);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    store.clear();
    expect(existsSync(file)).toBe(false);
    expect(store.load()).toEqual({});
  });

  it('refuses to save where there is no real encryption, and writes nothing', () => {
    const none = new SecretStore(file, aesCipher({ available: false }), 'darwin');
    expect(none.unavailableReason()).toMatch(/no encryption/);
    expect(() => none.save({ OPENAI_API_KEY: OPENAI_KEY })).toThrow(/not saved: the system offers no encryption/);
    const plainText = new SecretStore(file, aesCipher({ backend: 'basic_text' }), 'linux');
    expect(plainText.unavailableReason()).toMatch(/no keyring/);
    expect(() => plainText.save({ OPENAI_API_KEY: OPENAI_KEY })).toThrow(PanoptesError);
    expect(existsSync(file)).toBe(false);
  });

  it('asks for the storage backend on Linux only (it exists nowhere else)', () => {
    const mac = aesCipher();
    new SecretStore(file, mac, 'darwin').save({ OPENAI_API_KEY: OPENAI_KEY });
    expect(mac.calls).toEqual([]);
    const linux = aesCipher();
    expect(new SecretStore(file, linux, 'linux').unavailableReason()).toBeNull();
    expect(linux.calls).toEqual(['getSelectedStorageBackend']);
  });

  it('refuses malformed names and values, naming them', () => {
    const store = new SecretStore(file, aesCipher(), 'linux');
    expect(() => store.save({ 'lower-case': 'x' })).toThrow(/lower-case: Invalid key/);
    expect(() => store.save({ OPENAI_API_KEY: '' })).toThrow(/OPENAI_API_KEY/);
    expect(existsSync(file)).toBe(false);
  });

  it('names the file when the keys cannot be decrypted (another keychain, a damaged file)', () => {
    new SecretStore(file, aesCipher(), 'linux').save({ OPENAI_API_KEY: OPENAI_KEY });
    expect(() => new SecretStore(file, aesCipher(), 'linux').load()).toThrow(`${file}: saved API keys cannot be decrypted`);
    writeFileSync(file, 'garbage');
    expect(() => new SecretStore(file, aesCipher(), 'linux').load()).toThrow(/cannot be decrypted/);
  });
});

describe('importKeyFile', () => {
  const allowed = new Set(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'PANOPTES_WORKER_TOKEN']);

  it("keeps only the names the catalog's providers read", () => {
    const text = [
      '# keys for panoptes',
      `OPENAI_API_KEY=${OPENAI_KEY}`,
      'export ANTHROPIC_API_KEY="sk-ant-quoted value"',
      "PANOPTES_WORKER_TOKEN='worker-token-0123456789'",
      'NODE_OPTIONS=--require /tmp/evil.js',
      'LD_PRELOAD=/tmp/evil.so',
      'EMPTY_ONE=',
    ].join('\n');
    expect(importKeyFile(text, allowed)).toEqual({
      accepted: {
        OPENAI_API_KEY: OPENAI_KEY,
        ANTHROPIC_API_KEY: 'sk-ant-quoted value',
        PANOPTES_WORKER_TOKEN: 'worker-token-0123456789',
      },
      ignored: ['NODE_OPTIONS', 'LD_PRELOAD', 'EMPTY_ONE'],
    });
  });

  it('accepts nothing from a file with no known names', () => {
    expect(importKeyFile('PATH=/tmp\nHOME=/root\n', allowed)).toEqual({ accepted: {}, ignored: ['PATH', 'HOME'] });
  });
});

describe('applySecrets', () => {
  it('sets allowed, unset variables only: the environment wins, unknown names never land', () => {
    const env: NodeJS.ProcessEnv = { ANTHROPIC_API_KEY: 'from-the-shell' };
    const applied = applySecrets(
      env,
      { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: 'saved', NODE_OPTIONS: '--inspect' },
      new Set(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']),
    );
    expect(applied).toEqual(['OPENAI_API_KEY']);
    expect(env).toEqual({ ANTHROPIC_API_KEY: 'from-the-shell', OPENAI_API_KEY: OPENAI_KEY });
  });
});

describe('apiKeyNames', () => {
  it("lists the providers' key variables", () => {
    const catalog = Catalog.parse(
      {
      providers: {
        openai: { kind: 'openai', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY', trainsOnData: false },
        anthropic: { kind: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY', trainsOnData: false },
        local: { kind: 'mock', trainsOnData: false },
      },
      models: {},
      },
      'test catalog',
    );
    expect([...apiKeyNames(catalog)].sort()).toEqual(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY']);
  });
});

describe('keychainTokenKeeper', () => {
  it('keeps the worker token encrypted beside the saved keys, and refuses where there is no keyring', () => {
    const tmp = tempDir();
    try {
      const file = join(tmp.dir, 'secrets.bin');
      const store = new SecretStore(file, aesCipher(), 'linux');
      store.save({ OPENAI_API_KEY: OPENAI_KEY });
      const keeper = keychainTokenKeeper(store, 'PANOPTES_WORKER_TOKEN');
      expect(keeper.where).toContain('OS keychain');
      expect(keeper.load()).toBeNull();
      keeper.save('worker-token-abcdef0123456789');
      expect(keeper.load()).toBe('worker-token-abcdef0123456789');
      expect(store.load()).toEqual({ OPENAI_API_KEY: OPENAI_KEY, PANOPTES_WORKER_TOKEN: 'worker-token-abcdef0123456789' });
      expect(readFileSync(file).includes(Buffer.from('worker-token-abcdef'))).toBe(false);

      const plain = keychainTokenKeeper(new SecretStore(join(tmp.dir, 'plain.bin'), aesCipher({ backend: 'basic_text' }), 'linux'), 'PANOPTES_WORKER_TOKEN');
      expect(() => plain.save('t')).toThrow(/no keyring/);
    } finally {
      tmp.cleanup();
    }
  });
});
