/**
 * The desktop app's security policy, kept in one place: how the renderer's window is configured
 * (context isolation, sandbox, no Node), the Content-Security-Policy its pages carry, which frames
 * may call the engine over IPC, where the window may navigate (nowhere), which requests its
 * session may make (only the app's own files), which permissions it gets (none), and which links
 * may leave the app (validated https URLs, opened by the system browser).
 * Every function takes the Electron objects it configures as parameters (typed with
 * `import type`, so nothing here loads Electron), which lets the policy be unit-tested under Node.
 * Runs on: Electron main.
 */
import { isIP } from 'node:net';
import type { Session, WebContents, WebPreferences } from 'electron';
import { PanoptesError } from '../core/domain.js';

/** The renderer is served from `app://panoptes/` (a privileged standard scheme), never from the network. */
export const APP_SCHEME = 'app';
export const APP_HOST = 'panoptes';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY_URL = `${APP_ORIGIN}/index.html`;

/**
 * The renderer's CSP: scripts, styles, images and connections only from the app's own origin; no
 * inline script, no eval, no plugins, no frames, no forms, no <base>. The renderer talks to the
 * engine over IPC, so it needs no network at all.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "frame-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** The renderer window's web preferences: isolated, sandboxed, no Node, web security on. */
export function secureWebPreferences(preload: string, additionalArguments: string[]): WebPreferences {
  return {
    preload,
    additionalArguments,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    safeDialogs: true,
    spellcheck: false,
  };
}

/** True for a URL of the app's own renderer (`app://panoptes/...`). */
export function isAppUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === `${APP_SCHEME}:` && parsed.host === APP_HOST && parsed.username === '' && parsed.password === '';
}

/** The part of an IPC sender frame the check needs (Electron's `WebFrameMain`). */
export interface SenderFrame {
  readonly url: string;
  readonly parent: unknown;
}

/**
 * Only the top frame of the app's own renderer may call the engine: not a subframe, not a page
 * the window was somehow navigated to, not a frame that is gone (Electron reports it as null).
 */
export function isTrustedFrame(frame: SenderFrame | null | undefined): boolean {
  return frame !== null && frame !== undefined && frame.parent === null && isAppUrl(frame.url);
}

/** Requests the renderer's session may make: its own files, and DevTools' internal pages. */
export function isAllowedRequestUrl(url: string): boolean {
  if (isAppUrl(url)) return true;
  const scheme = url.slice(0, url.indexOf(':') + 1).toLowerCase();
  return scheme === 'devtools:' || scheme === 'data:' || scheme === 'blob:';
}

export interface ExternalLinkPolicy {
  /** Also open plain http:// links (a user setting; off by default). */
  allowHttp: boolean;
}

const MAX_EXTERNAL_URL_LENGTH = 2048;

/**
 * Returns the URL to hand to `shell.openExternal`, or throws naming why it is refused. A link may
 * leave the app only when what it shows is where it goes: https (http only when allowed), no
 * credentials (`https://trusted.com@evil.com` goes to evil.com), the host exactly as written
 * (no percent-encoding, backslashes, full-width or numeric forms the parser would rewrite), a
 * public DNS name (no IP literal, no localhost, no single label), and no punycode label (IDN
 * homographs imitate other hosts).
 */
export function validateExternalUrl(raw: unknown, policy: ExternalLinkPolicy): string {
  const refuse = (why: string): never => {
    throw new PanoptesError('invalid_input', `openExternal: ${why}`, { where: 'url' });
  };
  if (typeof raw !== 'string') return refuse('the URL must be a string');
  if (raw.length > MAX_EXTERNAL_URL_LENGTH) return refuse(`the URL is longer than ${MAX_EXTERNAL_URL_LENGTH} characters`);
  // Whitespace, control characters and backslashes are silently dropped or rewritten by the parser.
  if (/[\s\p{Cc}\\]/u.test(raw)) return refuse('the URL holds spaces, control characters or backslashes');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('not an absolute URL');
  }
  const schemes = policy.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return refuse(`only ${schemes.map((s) => s.slice(0, -1)).join(' or ')} links open outside the app, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') return refuse('credentials in a URL (user@host) hide where it really goes');
  const prefix = `${url.protocol}//`;
  if (raw.slice(0, prefix.length).toLowerCase() !== prefix) return refuse(`the URL must start with ${prefix}`);
  const writtenAuthority = raw.slice(prefix.length).split(/[/?#]/, 1)[0] ?? '';
  const writtenHost = writtenAuthority.replace(/:\d+$/, '').toLowerCase();
  const host = url.hostname;
  if (writtenHost !== host) return refuse(`the host as written ("${writtenHost}") is not the host it opens ("${host}")`);
  if (isIP(host) !== 0 || host.startsWith('[')) return refuse('links to IP addresses do not open outside the app');
  const labels = host.split('.');
  if (labels.length < 2 || labels.includes('')) return refuse(`"${host}" is not a public host name`);
  if (labels.some((l) => l.startsWith('xn--'))) return refuse(`"${host}" is an internationalised (punycode) name, which can imitate another host`);
  const tld = labels[labels.length - 1]!;
  if (tld === 'localhost' || tld === 'local' || tld === 'internal') return refuse(`"${host}" is a local host`);
  return url.href;
}

export interface NavigationGuardOptions {
  policy: ExternalLinkPolicy;
  /** Opens a validated link in the system browser (`shell.openExternal`). */
  openExternal(url: string): void;
  /** Told about every refused navigation or window (for the log). */
  onRefused(what: 'navigation' | 'window' | 'webview', url: string): void;
}

type GuardedContents = Pick<WebContents, 'on' | 'setWindowOpenHandler'>;

/**
 * Pins a web contents to the app: every navigation or redirect away from `app://panoptes` is
 * cancelled, no <webview> may attach, and no window may open. A request for a new window with a
 * valid external link (a `target="_blank"` link) goes to the system browser instead.
 */
export function guardWebContents(contents: GuardedContents, opts: NavigationGuardOptions): void {
  const pin = (event: { url: string; preventDefault(): void }): void => {
    if (isAppUrl(event.url)) return;
    event.preventDefault();
    opts.onRefused('navigation', event.url);
  };
  contents.on('will-navigate', pin);
  contents.on('will-frame-navigate', pin);
  contents.on('will-redirect', pin);
  contents.on('will-attach-webview', (event, _prefs, params) => {
    event.preventDefault();
    opts.onRefused('webview', params.src ?? '');
  });
  contents.setWindowOpenHandler(({ url }) => {
    let external: string | null = null;
    try {
      external = validateExternalUrl(url, opts.policy);
    } catch {
      opts.onRefused('window', url);
    }
    if (external !== null) opts.openExternal(external);
    return { action: 'deny' };
  });
}

type GuardedSession = Pick<Session, 'setPermissionRequestHandler' | 'setPermissionCheckHandler' | 'setDevicePermissionHandler'> & {
  webRequest: Pick<Session['webRequest'], 'onBeforeRequest'>;
};

/**
 * Locks a session down: every permission request and check is denied (camera, notifications,
 * clipboard reads, devices...), and every request that is not for the app's own files is cancelled.
 */
export function guardSession(session: GuardedSession, onRefused: (url: string) => void): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
  session.setDevicePermissionHandler(() => false);
  session.webRequest.onBeforeRequest((details, callback) => {
    const allowed = isAllowedRequestUrl(details.url);
    if (!allowed) onRefused(details.url);
    callback({ cancel: !allowed });
  });
}
