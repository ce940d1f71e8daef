import type { BudgetState, HeavyBudget } from './budget.ts';

/** Spends nothing, for benchmarks only (BENCH_DISABLE_LIMITS): every key has its whole budget. */
export class NoopBudget implements HeavyBudget {
  constructor(readonly perMinuteMs: number) {}

  async read(_id: string): Promise<BudgetState> {
    return { remainingMs: this.perMinuteMs, retryAfterSeconds: 0, usedMs: 0, resetSeconds: 0 };
  }

  async charge(_id: string, _ms: number): Promise<BudgetState> {
    return { remainingMs: this.perMinuteMs, retryAfterSeconds: 0, usedMs: 0, resetSeconds: 0 };
  }

  async close(): Promise<void> {}
}
