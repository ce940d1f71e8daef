import type { Clock } from '../clock.ts';
import { addCounts, type DayCounts, emptyCounts, newer, oldestKept, type Refusal, type UsageBatch } from './counts.ts';
import type { UsageStore } from './store.ts';

/** A single process's usage, in memory: what the file store writes out, and what tests and benches use alone. */
export class MemoryUsageStore implements UsageStore {
  /** date → key id → counts. */
  protected readonly byDate = new Map<string, Map<string, DayCounts>>();
  protected readonly refusals = new Map<string, Refusal>();

  constructor(protected readonly clock: Clock) {}

  async add(batch: UsageBatch): Promise<void> {
    for (const [id, days] of batch.days) {
      for (const [date, counts] of days) {
        let keys = this.byDate.get(date);
        if (!keys) {
          keys = new Map();
          this.byDate.set(date, keys);
        }
        keys.set(id, addCounts(keys.get(id) ?? emptyCounts(), counts));
      }
    }
    for (const [id, refusal] of batch.refusals) this.refusals.set(id, newer(this.refusals.get(id), refusal)!);
    this.prune();
  }

  async days(id: string, start: string, end: string): Promise<Map<string, DayCounts>> {
    const found = new Map<string, DayCounts>();
    for (const [date, keys] of this.byDate) {
      const counts = keys.get(id);
      if (counts && date >= start && date <= end) found.set(date, addCounts(emptyCounts(), counts));
    }
    return found;
  }

  async totals(start: string, end: string): Promise<Map<string, DayCounts>> {
    const sums = new Map<string, DayCounts>();
    for (const [date, keys] of this.byDate) {
      if (date < start || date > end) continue;
      for (const [id, counts] of keys) sums.set(id, addCounts(sums.get(id) ?? emptyCounts(), counts));
    }
    return sums;
  }

  async lastRefused(id: string): Promise<Refusal | null> {
    return this.refusals.get(id) ?? null;
  }

  async close(): Promise<void> {}

  /** Drops the days older than KEEP_DAYS. */
  protected prune(): void {
    const oldest = oldestKept(this.clock());
    for (const date of this.byDate.keys()) if (date < oldest) this.byDate.delete(date);
  }
}
