/**
 * Who owns a run, and whether that owner still lives: an owner id is `host:pid:nonce`, a fresh
 * nonce per claim (see run-fence.ts). On this host the OS says whether the pid lives; on another
 * host only the lease can tell.
 * Runs on: Node (core).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** This process, as an owner of runs: host and pid tell a crashed owner from a live one. */
export function processOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** Whether the owner is certainly gone: none, or a process of this host that no longer exists. */
export function ownerIsDeadLocally(owner: string | null): boolean {
  if (!owner) return true;
  const [host, pidText] = owner.split(':');
  if (host !== hostname()) return false;
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
