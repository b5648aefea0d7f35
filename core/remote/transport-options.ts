/**
 * The transport's options as the command line takes them: addresses and ports parsed, PEM files
 * read, each refused with the option's name. Apart from transport.ts, so that defining the
 * commands that take them loads neither node:net nor node:tls (every start of the command line
 * defines every command).
 * Runs on: Node (core).
 */
import { readFileSync } from 'node:fs';
import { PanoptesError } from '../domain.js';
import type { ServerTls } from './transport.js';

/** Reads the certificate and key files when both are given; neither means plain TCP. */
export function loadServerTls(certPath: string | undefined, keyPath: string | undefined): ServerTls | undefined {
  if (certPath === undefined && keyPath === undefined) return undefined;
  if (certPath === undefined || keyPath === undefined) {
    throw new PanoptesError('invalid_input', 'TLS needs both --tls-cert and --tls-key', { where: certPath === undefined ? '--tls-cert' : '--tls-key' });
  }
  return { cert: readPem(certPath, '--tls-cert'), key: readPem(keyPath, '--tls-key') };
}

export function readPem(path: string, where: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new PanoptesError('invalid_input', `${where}: cannot read ${path}: ${(err as Error).message}`, { where });
  }
}

/** Parses `HOST:PORT` (IPv6 as `[::1]:PORT`). */
export function parseHostPort(text: string, where: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port < 1 || port > 65535) {
    throw new PanoptesError('invalid_input', `${where}: expected HOST:PORT, got "${text}"`, { where });
  }
  return { host: (m[1] ?? m[2])!, port };
}

/** A TCP port number (0: any free port). */
export function parsePort(text: string, where: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text.trim()) || port > 65535) {
    throw new PanoptesError('invalid_input', `${where}: expected a port number 0-65535, got "${text}"`, { where });
  }
  return port;
}
