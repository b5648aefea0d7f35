/**
 * The desktop security policy: link validation (misleading URLs), the IPC sender check, the
 * window's web preferences, the CSP's directives, navigation and window guards, and the session
 * lock-down, each driven through fakes of the Electron objects it configures.
 * Runs on: Node (tests).
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { Session, WebContents } from 'electron';
import { PanoptesError } from '../../core/domain.js';
import {
  APP_ENTRY_URL,
  CONTENT_SECURITY_POLICY,
  guardSession,
  guardWebContents,
  isAllowedRequestUrl,
  isTrustedFrame,
  secureWebPreferences,
  validateExternalUrl,
} from '../../electron/security.js';

const HTTPS_ONLY = { allowHttp: false };

function refusal(url: unknown, policy = HTTPS_ONLY): PanoptesError {
  try {
    validateExternalUrl(url, policy);
  } catch (err) {
    expect(err).toBeInstanceOf(PanoptesError);
    const e = err as PanoptesError;
    expect(e.code).toBe('invalid_input');
    expect(e.where).toBe('url');
    return e;
  }
  throw new Error(`${String(url)} was accepted`);
}

describe('validateExternalUrl', () => {
  it('accepts plain https links and returns their normal form', () => {
    expect(validateExternalUrl('https://example.com/docs?q=1#top', HTTPS_ONLY)).toBe('https://example.com/docs?q=1#top');
    expect(validateExternalUrl('https://Docs.Example.COM', HTTPS_ONLY)).toBe('https://docs.example.com/');
    expect(validateExternalUrl('https://example.com:8443/x', HTTPS_ONLY)).toBe('https://example.com:8443/x');
    expect(validateExternalUrl('https://example.com:443/', HTTPS_ONLY)).toBe('https://example.com/');
    expect(validateExternalUrl('https://platform.openai.com/account/api-keys', HTTPS_ONLY)).toBe('https://platform.openai.com/account/api-keys');
  });

  it.each([
    ['https://evil.com@trusted.com', /credentials/],
    ['https://trusted.com@evil.com', /credentials/],
    ['https://trusted.com%2F@evil.com/', /credentials/],
    ['https://user:secret@example.com/', /credentials/],
  ])('refuses credentials that hide the real host: %s', (url, why) => {
    expect(refusal(url).message).toMatch(why);
  });

  it.each([
    ['javascript:alert(1)', /not javascript:/],
    ['JaVaScRiPt:alert(document.cookie)', /not javascript:/],
    ['file:///etc/passwd', /not file:/],
    ['data:text/html,<script>alert(1)</script>', /spaces|not data:/],
    ['data:text/html;base64,PHNjcmlwdD4=', /not data:/],
    ['vbscript:msgbox', /not vbscript:/],
    ['ftp://example.com/x', /not ftp:/],
    ['app://panoptes/index.html', /not app:/],
  ])('refuses schemes other than https: %s', (url, why) => {
    expect(refusal(url).message).toMatch(why);
  });

  it('refuses http unless the policy allows it', () => {
    expect(refusal('http://example.com/').message).toMatch(/only https links/);
    expect(validateExternalUrl('http://example.com/', { allowHttp: true })).toBe('http://example.com/');
    expect(refusal('javascript:alert(1)', { allowHttp: true }).message).toMatch(/only https or http/);
  });

  it.each([
    ['https://xn--pypal-4ve.com/login', /punycode/],
    ['https://login.xn--80ak6aa92e.com/', /punycode/],
    ['https://раураl.com/', /as written/],
    ['https://аpple.com/', /as written/],
    ['https://ｅｘａｍｐｌｅ.com/', /as written/],
    ['https://exa%6Dple.com/', /as written/],
  ])('refuses hosts that look like other hosts (IDN, encodings): %s', (url, why) => {
    expect(refusal(url).message).toMatch(why);
  });

  it.each([
    ['https://127.0.0.1/admin', /IP address/],
    ['https://0x7f.1/', /as written/],
    ['https://2130706433/', /as written/],
    ['https://[::1]/', /IP address/],
    ['https://localhost/', /public host name/],
    ['https://printer.local/', /local host/],
    ['https://app.localhost/', /local host/],
    ['https://intranet/', /public host name/],
    ['https://example.com./', /public host name/],
  ])('refuses IP literals and local names: %s', (url, why) => {
    expect(refusal(url).message).toMatch(why);
  });

  it.each([
    ['https:\\\\evil.com', /backslashes/],
    ['https:/\\evil.com', /backslashes/],
    ['https:evil.com', /must start with https:\/\//],
    ['https:/evil.com', /must start with https:\/\//],
    [' https://example.com', /spaces/],
    ['https://example.com\n.evil.com', /control characters/],
    ['https://exam\tple.com', /spaces/],
    ['https://example.com/\u0000', /control characters/],
    ['//example.com', /not an absolute URL/],
    ['example.com', /not an absolute URL/],
    [`https://example.com/${'a'.repeat(2100)}`, /longer than 2048/],
  ])('refuses malformed or rewritten URLs: %j', (url, why) => {
    expect(refusal(url).message).toMatch(why);
  });

  it.each([[42], [null], [undefined], [{ href: 'https://example.com' }]])('refuses non-strings: %j', (value) => {
    expect(refusal(value).message).toMatch(/must be a string/);
  });
});

describe('isTrustedFrame (the IPC sender check)', () => {
  it("trusts only the top frame of the app's own renderer", () => {
    expect(isTrustedFrame({ url: APP_ENTRY_URL, parent: null })).toBe(true);
    expect(isTrustedFrame({ url: 'app://panoptes/runs/r1?x=1#y', parent: null })).toBe(true);
  });

  it.each([
    ['a subframe of the app', { url: APP_ENTRY_URL, parent: {} }],
    ['a remote page', { url: 'https://evil.com/', parent: null }],
    ['another app:// host', { url: 'app://evil/index.html', parent: null }],
    ['credentials that change the host', { url: 'app://panoptes@evil/index.html', parent: null }],
    ['credentials on the app host', { url: 'app://user@panoptes/index.html', parent: null }],
    ['a file:// page', { url: 'file:///work/dist/renderer/index.html', parent: null }],
    ['the local HTTP bridge', { url: 'http://127.0.0.1:8787/', parent: null }],
    ['about:blank', { url: 'about:blank', parent: null }],
    ['an unparsable URL', { url: 'not a url', parent: null }],
    ['a frame that is gone', null],
    ['no frame at all', undefined],
  ])('refuses %s', (_what, frame) => {
    expect(isTrustedFrame(frame)).toBe(false);
  });
});

describe('secureWebPreferences', () => {
  it('isolates, sandboxes and keeps Node out of the renderer', () => {
    const prefs = secureWebPreferences('/app/preload.cjs', ['--panoptes-ipc={}']);
    expect(prefs).toMatchObject({
      preload: '/app/preload.cjs',
      additionalArguments: ['--panoptes-ipc={}'],
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
    });
  });
});

describe('CONTENT_SECURITY_POLICY', () => {
  const directives = new Map(
    CONTENT_SECURITY_POLICY.split(';').map((d) => {
      const [name, ...values] = d.trim().split(/\s+/);
      return [name!, values] as const;
    }),
  );

  it('denies by default and allows scripts only from the app itself', () => {
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-eval|unsafe-inline|\*|https?:/);
  });

  it('forbids plugins, frames, framing, <base> and forms', () => {
    for (const name of ['object-src', 'frame-src', 'frame-ancestors', 'base-uri', 'form-action']) {
      expect(directives.get(name), name).toEqual(["'none'"]);
    }
  });

  it('lets the renderer connect nowhere but its own origin', () => {
    expect(directives.get('connect-src')).toEqual(["'self'"]);
  });
});

describe('isAllowedRequestUrl (the session network guard)', () => {
  it.each(['app://panoptes/index.html', 'app://panoptes/assets/index-abc.js', 'devtools://devtools/bundled/x.html', 'data:image/png;base64,AA'])(
    'allows %s',
    (url) => expect(isAllowedRequestUrl(url)).toBe(true),
  );
  it.each(['https://example.com/', 'http://127.0.0.1:8787/api/runs', 'file:///etc/passwd', 'ws://127.0.0.1:1/', 'app://evil/x.js', 'chrome://settings'])(
    'cancels %s',
    (url) => expect(isAllowedRequestUrl(url)).toBe(false),
  );
});

/** A WebContents fake: real event emission, and the window-open handler kept for the test to call. */
class FakeContents extends EventEmitter {
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }): void {
    this.windowOpenHandler = handler;
  }
  navigate(event: string, url: string): boolean {
    let prevented = false;
    this.emit(event, { url, preventDefault: () => (prevented = true) });
    return prevented;
  }
}

describe('guardWebContents', () => {
  function guarded() {
    const contents = new FakeContents();
    const opened: string[] = [];
    const refused: Array<[string, string]> = [];
    guardWebContents(contents as unknown as WebContents, {
      policy: HTTPS_ONLY,
      openExternal: (url) => opened.push(url),
      onRefused: (what, url) => refused.push([what, url]),
    });
    return { contents, opened, refused };
  }

  it('cancels every navigation and redirect away from the app, and lets in-app ones through', () => {
    const { contents, refused } = guarded();
    for (const event of ['will-navigate', 'will-frame-navigate', 'will-redirect']) {
      expect(contents.navigate(event, 'https://evil.com/phish'), event).toBe(true);
      expect(contents.navigate(event, 'file:///etc/passwd'), event).toBe(true);
      expect(contents.navigate(event, 'app://evil/index.html'), event).toBe(true);
      expect(contents.navigate(event, 'app://panoptes/index.html'), event).toBe(false);
    }
    expect(refused).toHaveLength(9);
    expect(refused[0]).toEqual(['navigation', 'https://evil.com/phish']);
  });

  it('refuses to attach a <webview>', () => {
    const { contents, refused } = guarded();
    let prevented = false;
    contents.emit('will-attach-webview', { preventDefault: () => (prevented = true) }, {}, { src: 'https://evil.com/' });
    expect(prevented).toBe(true);
    expect(refused).toEqual([['webview', 'https://evil.com/']]);
  });

  it('opens no window; a valid https link goes to the system browser instead', () => {
    const { contents, opened, refused } = guarded();
    expect(contents.windowOpenHandler!({ url: 'https://example.com/docs' })).toEqual({ action: 'deny' });
    expect(contents.windowOpenHandler!({ url: 'https://evil.com@trusted.com/' })).toEqual({ action: 'deny' });
    expect(contents.windowOpenHandler!({ url: 'javascript:alert(1)' })).toEqual({ action: 'deny' });
    expect(contents.windowOpenHandler!({ url: 'app://panoptes/index.html' })).toEqual({ action: 'deny' });
    expect(opened).toEqual(['https://example.com/docs']);
    expect(refused.map(([what]) => what)).toEqual(['window', 'window', 'window']);
  });
});

describe('guardSession', () => {
  it('denies every permission and cancels every request that is not for the app', () => {
    let requestHandler: Parameters<Session['setPermissionRequestHandler']>[0] = null;
    let checkHandler: Parameters<Session['setPermissionCheckHandler']>[0] = null;
    let deviceHandler: Parameters<Session['setDevicePermissionHandler']>[0] = null;
    let beforeRequest: ((details: { url: string }, callback: (r: { cancel: boolean }) => void) => void) | null = null;
    const session = {
      setPermissionRequestHandler: (h: typeof requestHandler) => (requestHandler = h),
      setPermissionCheckHandler: (h: typeof checkHandler) => (checkHandler = h),
      setDevicePermissionHandler: (h: typeof deviceHandler) => (deviceHandler = h),
      webRequest: { onBeforeRequest: (h: typeof beforeRequest) => (beforeRequest = h) },
    };
    const refused: string[] = [];
    guardSession(session as unknown as Session, (url) => refused.push(url));

    for (const permission of ['media', 'notifications', 'geolocation', 'clipboard-read', 'openExternal'] as const) {
      const granted = vi.fn();
      requestHandler!({} as WebContents, permission, granted, {} as never);
      expect(granted, permission).toHaveBeenCalledWith(false);
      expect(checkHandler!(null, permission === 'clipboard-read' ? 'clipboard-read' : 'media', APP_ENTRY_URL, {} as never)).toBe(false);
    }
    expect(deviceHandler!({} as never)).toBe(false);

    const decide = (url: string) => {
      let cancel: boolean | undefined;
      beforeRequest!({ url }, (r) => (cancel = r.cancel));
      return cancel;
    };
    expect(decide('app://panoptes/assets/index.js')).toBe(false);
    expect(decide('https://tracker.example.com/pixel.gif')).toBe(true);
    expect(decide('http://127.0.0.1:8787/api/runs')).toBe(true);
    expect(refused).toEqual(['https://tracker.example.com/pixel.gif', 'http://127.0.0.1:8787/api/runs']);
  });
});
