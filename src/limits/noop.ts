import type { Clock } from '../clock.ts';
import { type Decision, type Limiter, type LimitPolicy, uncounted } from './limiter.ts';

/**
 * Admits everything and counts nothing, for benchmarks only (BENCH_DISABLE_LIMITS):
 * the headers are still rendered, so a bench pays for them as users do.
 */
export class NoopLimiter implements Limiter {
  constructor(
    readonly policy: LimitPolicy,
    private readonly clock: Clock,
  ) {}

  async consume(_id: string): Promise<Decision> {
    return uncounted(this.policy, this.clock());
  }

  async peek(_id: string): Promise<Decision> {
    return uncounted(this.policy, this.clock());
  }

  async close(): Promise<void> {}
}
