import type { Clock } from '../clock.ts';
import { type BudgetState, budgetState, type HeavyBudget, type Spent } from './budget.ts';
import { MINUTE_MS } from './limiter.ts';

/**
 * The embedded default, exact for one process; also what a replica falls back to
 * while Redis cannot answer. Keys with nothing spent in the last minute are swept
 * once a minute of clock time.
 */
export class MemoryBudget implements HeavyBudget {
  private readonly spent = new Map<string, Spent[]>();
  private lastSweep: number;

  constructor(
    readonly perMinuteMs: number,
    private readonly clock: Clock,
  ) {
    this.lastSweep = clock();
  }

  async read(id: string): Promise<BudgetState> {
    return this.update(id, 0);
  }

  async charge(id: string, ms: number): Promise<BudgetState> {
    return this.update(id, ms);
  }

  /** Synchronous, for the Redis budget's fallback to record every charge as it happens. */
  update(id: string, ms: number): BudgetState {
    const now = this.clock();
    if (now - this.lastSweep >= MINUTE_MS) this.sweep(now);
    let log = this.spent.get(id);
    if (!log) {
      log = [];
      this.spent.set(id, log);
    }
    prune(log, now);
    if (ms > 0) log.push({ at: now, ms });
    return budgetState(this.perMinuteMs, log, now);
  }

  async close(): Promise<void> {
    this.spent.clear();
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [id, log] of this.spent) {
      prune(log, now);
      if (log.length === 0) this.spent.delete(id);
    }
  }
}

/** A charge made at t leaves the window at t + 60 s exactly. */
function prune(log: Spent[], now: number): void {
  let expired = 0;
  while (expired < log.length && log[expired]!.at <= now - MINUTE_MS) expired++;
  if (expired > 0) log.splice(0, expired);
}
