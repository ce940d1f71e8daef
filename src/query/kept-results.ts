import { LRUCache } from 'lru-cache';
import { resultBytes, type AggregateResult } from './aggregate.ts';

/**
 * Aggregate results kept whole, so every page of one aggregate slices the same
 * result: walking all its pages groups the rows once per release, not once per
 * page. Identical requests arriving together share one computation. Bounded in
 * bytes (AGGREGATE_KEEP_BYTES); a result evicted mid-walk is computed again, to the
 * same groups in the same order, so its cursors stay good.
 */
export class AggregateResults {
  private readonly kept: LRUCache<string, { release: string; result: AggregateResult }>;
  private readonly running = new Map<string, Promise<AggregateResult>>();

  readonly maxGroups: number;
  /** Called once per computation actually run (the metric that proves the above). */
  private readonly counted: () => void;

  constructor(options: { maxBytes: number; maxGroups: number; counted: () => void }) {
    this.kept = new LRUCache({ maxSize: Math.max(1, options.maxBytes), sizeCalculation: ({ result }) => resultBytes(result) });
    this.maxGroups = options.maxGroups;
    this.counted = options.counted;
  }

  /** The result kept under `key` (canonical: release, dataset, filters, shape), computed now if there is none. */
  async get(key: string, release: string, compute: () => AggregateResult | Promise<AggregateResult>): Promise<AggregateResult> {
    const kept = this.kept.get(key);
    if (kept) return kept.result;
    let running = this.running.get(key);
    if (!running) {
      running = (async () => {
        this.counted();
        const result = await compute();
        this.kept.set(key, { release, result });
        return result;
      })();
      this.running.set(key, running);
      void running.finally(() => this.running.delete(key)).catch(() => {});
    }
    return running;
  }

  /** Forgets the results of releases that can no longer be read (`readable` false). */
  forgetUnless(readable: (release: string) => boolean): void {
    for (const [key, { release }] of [...this.kept.entries()]) if (!readable(release)) this.kept.delete(key);
  }
}
