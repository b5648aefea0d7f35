/**
 * Sockets that have not yet shown who they are: no authenticated request on the HTTP port, no
 * accepted `register` on the worker port. They count against a cap of their own, and when a new one
 * would pass it the one that has waited longest is closed. A flood of idle or dribbling connections
 * so pushes out its own oldest members, never a client that has authenticated, and a newcomer always
 * gets its few seconds (the server's header or register timeout) to authenticate.
 * Runs on: Node (core).
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';

/** Which registry holds a socket, so an auth check can vouch for it without knowing the server. */
const registryOf = new WeakMap<Socket, GuestSockets>();

export class GuestSockets {
  /** In arrival order: the first is the one that has waited longest. */
  private readonly guests = new Set<Socket>();
  evicted = 0;

  constructor(readonly cap: number) {}

  /** Takes in a new connection as a guest, closing the longest-waiting guests past the cap. */
  admit(socket: Socket): void {
    this.guests.add(socket);
    registryOf.set(socket, this);
    socket.once('close', () => this.guests.delete(socket));
    for (const oldest of this.guests) {
      if (this.guests.size <= this.cap) break;
      this.guests.delete(oldest);
      this.evicted++;
      oldest.destroy();
    }
  }

  get size(): number {
    return this.guests.size;
  }

  release(socket: Socket): void {
    this.guests.delete(socket);
  }
}

/** The socket has authenticated: it no longer counts as a guest (and cannot be pushed out as one). */
export function vouchFor(socket: Socket): void {
  registryOf.get(socket)?.release(socket);
}

/** File descriptors kept for everything but connections: the database, logs, responses.jsonl, workers. */
const RESERVED_FDS = 256;

/**
 * Connection caps for one of the two listening ports that fit the process's open-file limit: guests
 * get `guests` (default 4,096), and all connections together `guests + 1,024`, both lowered to half
 * of what the limit leaves (the other half is the other port's). Node cannot raise the limit itself;
 * `ulimit -n` before starting does (read from /proc on Linux, 1,024 assumed elsewhere).
 */
export function connectionCaps(guests = 4096): { guests: number; total: number } {
  const room = Math.max(64, Math.floor((openFileLimit() - RESERVED_FDS) / 2));
  const total = Math.min(guests + 1024, room);
  return { guests: Math.min(guests, Math.max(32, total - 32)), total };
}

function openFileLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(soft) || 1024;
  } catch {
    return 1024;
  }
}
