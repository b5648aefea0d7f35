/**
 * Heartbeat: both ends of a worker connection send one every interval and watch for the other's.
 * Any frame counts as a sign of life; after `missed` intervals of silence the peer is presumed dead
 * (a killed or frozen process, a half-open connection), which the owner turns into closing the
 * connection and failing its jobs over.
 * Runs on: Node (core).
 */

export interface HeartbeatOptions {
  intervalMs: number;
  /** Intervals of silence after which the peer is dead. */
  missed: number;
  send(): void;
  onDead(silentMs: number): void;
}

export const DEFAULT_HEARTBEAT_MS = 2000;
export const DEFAULT_MISSED_HEARTBEATS = 3;

export class Heartbeat {
  private lastSeen = Date.now();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: HeartbeatOptions) {}

  start(): void {
    this.lastSeen = Date.now();
    this.timer ??= setInterval(() => this.beat(), this.opts.intervalMs);
    this.timer.unref();
  }

  /** The peer said something. */
  seen(): void {
    this.lastSeen = Date.now();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private beat(): void {
    const silent = Date.now() - this.lastSeen;
    if (silent > this.opts.intervalMs * this.opts.missed) {
      this.stop();
      this.opts.onDead(silent);
      return;
    }
    this.opts.send();
  }
}
