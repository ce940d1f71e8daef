import { LRUCache } from 'lru-cache';

/**
 * Query results kept whole, so every page of one walk slices the same result:
 * walking all the pages of an aggregate (or of a revisions diff) computes it once
 * per release, not once per page. Identical requests arriving together share one
 * computation. Bounded in bytes; a result evicted mid-walk is computed again, to the
 * same rows in the same order, so its cursors stay good.
 */
export class KeptResults<T> {
  private readonly kept: LRUCache<string, { releases: readonly string[]; result: T }>;
  private readonly running = new Map<string, Promise<T>>();

  constructor(
    private readonly options: {
      maxBytes: number;
      sizeOf: (result: T) => number;
      /** Called once per computation actually run (the metric that proves the above). */
      counted: () => void;
    },
  ) {
    this.kept = new LRUCache({ maxSize: Math.max(1, options.maxBytes), sizeCalculation: ({ result }) => Math.max(1, options.sizeOf(result)) });
  }

  /** The result kept under `key` (canonical: releases, dataset, filters, shape), computed now if there is none. */
  async get(key: string, releases: readonly string[], compute: () => T | Promise<T>): Promise<T> {
    const kept = this.kept.get(key);
    if (kept) return kept.result;
    let running = this.running.get(key);
    if (!running) {
      running = (async () => {
        this.options.counted();
        const result = await compute();
        this.kept.set(key, { releases, result });
        return result;
      })();
      this.running.set(key, running);
      void running.finally(() => this.running.delete(key)).catch(() => {});
    }
    return running;
  }

  /** Forgets the results read from a release that can no longer be asked for (`readable` false). */
  forgetUnless(readable: (release: string) => boolean): void {
    for (const [key, { releases }] of [...this.kept.entries()]) if (!releases.every(readable)) this.kept.delete(key);
  }
}
