/**
 * API keys the user gave the desktop app, kept encrypted with Electron's `safeStorage` (the OS
 * keychain, DPAPI, or libsecret/kwallet) in one file under userData, and put into the engine's
 * environment before it opens, under the variable names the catalog's providers declare
 * (`apiKeyEnv`). Only those names are ever accepted, so a key file cannot set NODE_OPTIONS or
 * the like. Values never reach a log line: only names and counts do.
 * `safeStorage` is a parameter, so this is unit-tested under Node with a fake cipher.
 * Runs on: Electron main.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { parse as parseDotenv } from 'dotenv';
import type { SafeStorage } from 'electron';
import { z } from 'zod';
import { writeFileAtomicSync } from '../core/atomic-write.js';
import { PanoptesError } from '../core/domain.js';
import type { Catalog } from '../core/models/catalog.js';
import type { WorkerTokenKeeper } from '../core/remote/listener-control.js';
import { formatZodIssues } from '../core/validation.js';

export type Cipher = Pick<SafeStorage, 'isEncryptionAvailable' | 'encryptString' | 'decryptString' | 'getSelectedStorageBackend'>;

const SecretsSchema = z.record(
  z.string().regex(/^[A-Z][A-Z0-9_]{0,127}$/, 'an environment variable name (A-Z, 0-9, _)'),
  z.string().min(1).max(8192),
);
export type Secrets = z.infer<typeof SecretsSchema>;

/** The environment variables the catalog's providers read their keys from. */
export function apiKeyNames(catalog: Catalog): Set<string> {
  const names = new Set<string>();
  for (const provider of Object.values(catalog.data.providers)) if (provider.apiKeyEnv) names.add(provider.apiKeyEnv);
  return names;
}

export class SecretStore {
  constructor(
    readonly file: string,
    private readonly cipher: Cipher,
    private readonly platform: NodeJS.Platform = process.platform,
  ) {}

  /** Why keys cannot be kept safely here, or null when they can. */
  unavailableReason(): string | null {
    if (!this.cipher.isEncryptionAvailable()) return 'the system offers no encryption for app secrets';
    // Without a keyring, Linux falls back to a fixed, public password: that is not encryption.
    if (this.platform === 'linux' && this.cipher.getSelectedStorageBackend() === 'basic_text') {
      return 'no keyring (GNOME Keyring or KWallet) is running, so keys could only be kept as plain text';
    }
    return null;
  }

  /** The saved keys ({} when none were saved); throws naming the file when it cannot be read back. */
  load(): Secrets {
    if (!existsSync(this.file)) return {};
    const reason = this.unavailableReason();
    if (reason !== null) throw new PanoptesError('auth', `${this.file}: saved API keys cannot be decrypted: ${reason}`, { where: this.file });
    let parsed: unknown;
    try {
      parsed = JSON.parse(this.cipher.decryptString(readFileSync(this.file)));
    } catch (err) {
      throw new PanoptesError('auth', `${this.file}: saved API keys cannot be decrypted (was the OS keychain reset?)`, {
        where: this.file,
        cause: err,
      });
    }
    const checked = SecretsSchema.safeParse(parsed);
    if (!checked.success) throw new PanoptesError('invalid_input', `${this.file}: ${formatZodIssues(checked.error)}`, { where: this.file });
    return checked.data;
  }

  /** Encrypts and writes the keys (owner-only file, atomic replace). */
  save(secrets: Secrets): void {
    const reason = this.unavailableReason();
    if (reason !== null) throw new PanoptesError('auth', `API keys were not saved: ${reason}; set them as environment variables instead`);
    const checked = SecretsSchema.safeParse(secrets);
    if (!checked.success) throw new PanoptesError('invalid_input', `API keys: ${formatZodIssues(checked.error)}`);
    writeFileAtomicSync(this.file, this.cipher.encryptString(JSON.stringify(checked.data)), 0o600);
  }

  clear(): void {
    rmSync(this.file, { force: true });
  }
}

export interface KeyImport {
  /** Keys for the catalog's providers, by variable name. */
  accepted: Secrets;
  /** Names in the file that no provider reads (not imported). */
  ignored: string[];
}

/** Reads `NAME=value` lines (dotenv syntax), keeping only the names the catalog's providers read. */
export function importKeyFile(text: string, allowed: ReadonlySet<string>): KeyImport {
  const accepted: Secrets = {};
  const ignored: string[] = [];
  for (const [name, value] of Object.entries(parseDotenv(text))) {
    if (allowed.has(name) && value !== '') accepted[name] = value;
    else ignored.push(name);
  }
  return { accepted, ignored };
}

/**
 * Puts saved keys into `env` for the names the catalog's providers read. A variable already set
 * in the environment wins: the user's shell is more deliberate than a saved file. Returns the
 * names it set.
 */
export function applySecrets(env: NodeJS.ProcessEnv, secrets: Secrets, allowed: ReadonlySet<string>): string[] {
  const applied: string[] = [];
  for (const [name, value] of Object.entries(secrets)) {
    if (!allowed.has(name) || env[name]) continue;
    env[name] = value;
    applied.push(name);
  }
  return applied;
}

/**
 * The worker listener's token, kept among the saved keys (encrypted with the OS keychain) under
 * `name`. Saving refuses, with the reason, where the system offers no real encryption.
 */
export function keychainTokenKeeper(secrets: SecretStore, name: string): WorkerTokenKeeper {
  return {
    where: `the OS keychain (encrypted with the saved API keys in ${secrets.file})`,
    load: () => secrets.load()[name] ?? null,
    save: (token) => secrets.save({ ...secrets.load(), [name]: token }),
  };
}
