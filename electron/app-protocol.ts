/**
 * The `app://panoptes/` protocol: serves the built renderer (dist/renderer) to the window, every
 * response carrying the app's Content-Security-Policy. A custom scheme rather than file:// gives
 * the renderer a real origin (so `'self'` in the CSP means exactly its own files and the IPC
 * sender check has something exact to compare) and keeps every other file on disk out of reach.
 * A handler is a plain `Request -> Response` function, registered with `protocol.handle`.
 * Runs on: Electron main.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { APP_HOST, CONTENT_SECURITY_POLICY } from './security.js';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

function securityHeaders(contentType: string): Record<string, string> {
  return {
    'Content-Type': contentType,
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-cache',
  };
}

function plain(status: number, text: string): Response {
  return new Response(text, { status, headers: securityHeaders('text/plain; charset=utf-8') });
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isFile() ?? false;
}

/**
 * Serves files under `rootDir` for `app://panoptes/<path>`. A path without an extension that names
 * no file gets index.html (the renderer routes itself); anything resolving outside `rootDir`
 * (`..`, encoded or not) is not found.
 */
export function createAppProtocolHandler(rootDir: string): (request: Request) => Promise<Response> {
  const root = resolve(rootDir);
  const index = resolve(root, 'index.html');
  return async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return plain(405, 'method not allowed');
    const url = new URL(request.url);
    if (url.host !== APP_HOST) return plain(404, 'not found');
    let path: string;
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      return plain(400, 'bad path');
    }
    if (path.includes('\0')) return plain(400, 'bad path');
    let file = resolve(root, `.${path}`);
    if (file !== root && !file.startsWith(root + sep)) return plain(404, 'not found');
    if (!(await isFile(file))) {
      if (extname(file) !== '' && file !== root) return plain(404, 'not found');
      if (!(await isFile(index))) return plain(404, 'the renderer is not built (run npm run build)');
      file = index;
    }
    const type = CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
    const body = request.method === 'HEAD' ? null : await readFile(file);
    return new Response(body, { status: 200, headers: securityHeaders(type) });
  };
}
