/**
 * The DNS-rebinding and cross-site defence for a service on 127.0.0.1. A web page can make the
 * browser send requests to a loopback port under its own name (evil.example resolving to
 * 127.0.0.1), so the Host header must be a name this server answers to; and a browser request from
 * another origin carries an Origin header naming it, so Origin, when present, must be this very
 * server (same scheme-less host and port as the Host). Requests without Origin (curl, scripts) pass.
 * Runs on: Node (core).
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { sendError } from './errors.js';

export interface HostGuardOptions {
  /** The address the server binds; accepted as a Host name unless it is a wildcard. */
  bindHost: string;
  /** More names the server answers to (a LAN name or address when bound beyond loopback). */
  allowedHosts?: readonly string[];
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]', '::1'];
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/** `name[:port]` split into a lower-case name (IPv6 kept in brackets) and its port text. */
function splitHost(host: string): { name: string; port: string } {
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(host.trim().toLowerCase());
  return m ? { name: m[1]!, port: m[2] ?? '' } : { name: '', port: '' };
}

function bracketed(name: string): string {
  return name.includes(':') && !name.startsWith('[') ? `[${name}]` : name;
}

/** The set of Host names a server bound to `bindHost` answers to. */
function allowedHostNames(opts: HostGuardOptions): Set<string> {
  const names = new Set(LOOPBACK_NAMES.map((n) => bracketed(n.toLowerCase())));
  if (!WILDCARDS.has(opts.bindHost)) names.add(bracketed(opts.bindHost.toLowerCase()));
  for (const h of opts.allowedHosts ?? []) names.add(bracketed(splitHost(h).name || h.toLowerCase()));
  return names;
}

/** Why a request's Host/Origin pair is refused, or null when it is acceptable. */
function hostOriginProblem(
  host: string | undefined,
  origin: string | undefined,
  allowed: ReadonlySet<string>,
): string | null {
  if (!host) return 'missing Host header';
  const h = splitHost(host);
  if (!allowed.has(h.name)) return `Host "${host}" is not a name this server answers to`;
  if (origin === undefined) return null;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `Origin "${origin}" is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `Origin "${origin}" is not this server`;
  const o = splitHost(url.host);
  const defaultPort = url.protocol === 'https:' ? '443' : '80';
  const sameName = o.name === h.name;
  const samePort = (o.port || defaultPort) === (h.port || defaultPort);
  return sameName && samePort ? null : `Origin "${origin}" is not this server`;
}

/** An onRequest hook answering 403 to a foreign Host or a cross-origin browser request. */
export function hostOriginGuard(opts: HostGuardOptions): onRequestHookHandler {
  const allowed = allowedHostNames(opts);
  return function guardHostAndOrigin(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    const origin = request.headers.origin;
    const problem = hostOriginProblem(request.headers.host, typeof origin === 'string' ? origin : undefined, allowed);
    if (problem === null) {
      done();
      return;
    }
    request.log.warn({ host: request.headers.host, origin }, 'refused a foreign Host or Origin');
    sendError(reply, 403, 'forbidden', problem);
  };
}
