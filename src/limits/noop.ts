import { type Clock, type Decision, type LimitPolicy, type LocalLimiter, uncounted } from './limiter.ts';

/**
 * Admits everything and counts nothing, for benchmarks only (BENCH_DISABLE_LIMITS):
 * the headers are still rendered, so a bench pays for them as users do.
 */
export class NoopLimiter implements LocalLimiter {
  constructor(
    readonly policy: LimitPolicy,
    private readonly clock: Clock,
  ) {}

  async consume(id: string): Promise<Decision> {
    return this.consumeHere(id);
  }

  consumeHere(_id: string): Decision {
    return uncounted(this.policy, this.clock());
  }

  async peek(_id: string): Promise<Decision> {
    return uncounted(this.policy, this.clock());
  }

  async close(): Promise<void> {}
}
