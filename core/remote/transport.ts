/**
 * The sockets under the worker protocol: plain TCP, or TLS (node:tls) when the coordinator has a
 * certificate and key. A worker verifies the coordinator against a CA file (or the system's), or
 * against a pinned sha256 fingerprint of its certificate for a self-signed one.
 * Runs on: Node (core).
 */
import { X509Certificate } from 'node:crypto';
import net, { type Socket } from 'node:net';
import tls from 'node:tls';
import { PanoptesError } from '../domain.js';

/** The coordinator's certificate and key (PEM). */
export interface ServerTls {
  cert: string | Buffer;
  key: string | Buffer;
}

/** How a worker trusts the coordinator over TLS. */
export interface ClientTls {
  /** PEM of the CA (or the self-signed certificate) to trust instead of the system's CAs. */
  ca?: string | Buffer | undefined;
  /** The coordinator certificate's sha256 fingerprint (hex, colons optional): pinned, nothing else checked. */
  fingerprint?: string | undefined;
}

export interface CoordinatorAddress {
  host: string;
  port: number;
  tls?: ClientTls;
}

/** `AB:CD:...` or `abcd...` to one canonical form. */
export function normalizeFingerprint(fingerprint: string): string {
  return fingerprint.replace(/[:\s]/g, '').toUpperCase();
}

/** The sha256 fingerprint of a PEM certificate, as `openssl x509 -fingerprint -sha256` prints it. */
export function certificateFingerprint(pem: string | Buffer): string {
  return new X509Certificate(pem).fingerprint256;
}

/** Opens a connection to a coordinator; resolves once it is ready for frames (TLS verified). */
export function connectToCoordinator(addr: CoordinatorAddress, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const pin = addr.tls?.fingerprint === undefined ? undefined : normalizeFingerprint(addr.tls.fingerprint);
    let socket: Socket;
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    const ready = () => {
      clearTimeout(timer);
      socket.off('error', fail);
      resolve(socket);
    };
    if (addr.tls) {
      const tlsSocket = tls.connect({
        host: addr.host,
        port: addr.port,
        ...(net.isIP(addr.host) === 0 ? { servername: addr.host } : {}),
        ca: addr.tls.ca,
        // A pinned fingerprint replaces chain verification (a self-signed certificate has no chain).
        rejectUnauthorized: pin === undefined,
      });
      tlsSocket.once('secureConnect', () => {
        if (pin !== undefined) {
          const got = tlsSocket.getPeerCertificate().fingerprint256;
          if (!got || normalizeFingerprint(got) !== pin) {
            return fail(new PanoptesError('connection', `the coordinator's certificate fingerprint ${got ?? '(none)'} is not the pinned one`));
          }
        }
        ready();
      });
      socket = tlsSocket;
    } else {
      socket = net.connect({ host: addr.host, port: addr.port });
      socket.once('connect', ready);
    }
    socket.once('error', fail);
    const timer = setTimeout(() => fail(new PanoptesError('timeout', `no connection to ${addr.host}:${addr.port} within ${timeoutMs} ms`)), timeoutMs);
  });
}

/** A listening server: TLS when given a certificate and key, plain TCP otherwise. */
export function createTransportServer(
  onConnection: (socket: Socket) => void,
  opts: { tls?: ServerTls; handshakeTimeoutMs: number; onTlsError(err: Error, socket: Socket): void },
): net.Server {
  if (!opts.tls) return net.createServer(onConnection);
  const server = tls.createServer({ cert: opts.tls.cert, key: opts.tls.key, handshakeTimeout: opts.handshakeTimeoutMs }, onConnection);
  server.on('tlsClientError', (err, socket) => opts.onTlsError(err, socket));
  return server;
}

