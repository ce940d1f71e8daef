import type { BudgetState, HeavyBudget } from '../limits/budget.ts';
import type { Decision, Limiter } from '../limits/limiter.ts';
import type { UsageLog } from './usage-log.ts';

// The limiters whose charges a key's daily usage counts as they are made, wherever a
// request charges them: heavy seconds (charged after the answer, too, for shared
// work) and exports.

/** The heavy budget, each charge also counted in the key's usage. */
export function countedBudget(budget: HeavyBudget, log: UsageLog): HeavyBudget {
  return {
    perMinuteMs: budget.perMinuteMs,
    read: (id) => budget.read(id),
    charge(id: string, ms: number): Promise<BudgetState> {
      log.heavy(id, ms);
      return budget.charge(id, ms);
    },
    close: () => budget.close(),
  };
}

/** The export limiter, each export it admits also counted in the key's usage. */
export function countedExports(limiter: Limiter, log: UsageLog): Limiter {
  return {
    policy: limiter.policy,
    async consume(id: string): Promise<Decision> {
      const decision = await limiter.consume(id);
      if (decision.allowed) log.exported(id);
      return decision;
    },
    peek: (id) => limiter.peek(id),
    close: () => limiter.close(),
  };
}
