import type { Clock } from '../clock.ts';
import { DAY_MS, type Decision, decide, type Limiter, type LimitPolicy, MINUTE_MS } from './limiter.ts';

interface Entry {
  /** Admission times within the last 60 s, oldest first. */
  log: number[];
  day: number;
  dayUsed: number;
}

/**
 * The embedded default: exact for one process. Idle entries are swept once a minute
 * of clock time, so memory follows the ids active in the last minute (and, with a
 * day window, today).
 */
export class MemoryLimiter implements Limiter {
  private readonly entries = new Map<string, Entry>();
  private lastSweep: number;

  constructor(
    readonly policy: LimitPolicy,
    private readonly clock: Clock,
  ) {
    this.lastSweep = clock();
  }

  async consume(id: string): Promise<Decision> {
    return this.check(id, true);
  }

  async peek(id: string): Promise<Decision> {
    return this.check(id, false);
  }

  private check(id: string, consume: boolean): Decision {
    const now = this.clock();
    if (now - this.lastSweep >= MINUTE_MS) this.sweep(now);
    const today = Math.floor(now / DAY_MS);
    let entry = this.entries.get(id);
    if (!entry) {
      entry = { log: [], day: today, dayUsed: 0 };
      this.entries.set(id, entry);
    }
    prune(entry.log, now);
    if (entry.day !== today) {
      entry.day = today;
      entry.dayUsed = 0;
    }
    const { perMinute, perDay = Infinity } = this.policy;
    const allowed = entry.log.length < perMinute && entry.dayUsed < perDay;
    if (allowed && consume) {
      entry.log.push(now);
      entry.dayUsed++;
    }
    return decide(this.policy, { now, allowed, minuteUsed: entry.log.length, oldest: entry.log[0], dayUsed: entry.dayUsed });
  }

  async close(): Promise<void> {
    this.entries.clear();
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    const today = Math.floor(now / DAY_MS);
    for (const [id, entry] of this.entries) {
      prune(entry.log, now);
      if (entry.log.length === 0 && (this.policy.perDay === undefined || entry.day !== today)) this.entries.delete(id);
    }
  }
}

/** A unit spent at t comes back at t + 60 s exactly. */
function prune(log: number[], now: number): void {
  let expired = 0;
  while (expired < log.length && log[expired]! <= now - MINUTE_MS) expired++;
  if (expired > 0) log.splice(0, expired);
}
