import type { Clock } from '../clock.ts';
import { addCounts, DAY_MS, type DayCounts, dateOf, emptyCounts, newer, type Refusal, type UsageBatch } from './counts.ts';
import type { UsageStore } from './store.ts';

/** What the recorder keeps of one answered request. */
export interface Answered {
  readonly status: number;
  /** The route pattern, or `unmatched`. */
  readonly endpoint: string;
  readonly bytes: number;
  /** The limit that refused it, if one did. */
  readonly refused?: string;
}

/**
 * Each key's usage as requests are answered, at a cost a request can afford: noting
 * one adds to counters in memory (one Map get per key and day); the counts are added to
 * the store once per `flushMs` (and on close), as one batch, so no request waits for
 * the store or fails with it. A batch the store refuses (Redis down) is kept for the
 * next flush. Reads add what is not written yet, so this process's own answers show at once.
 */
export class UsageLog {
  private pending = new Map<string, Map<string, DayCounts>>();
  private refusals = new Map<string, Refusal>();
  private readonly timer: NodeJS.Timeout;
  /** The date of `day`, kept: most notes fall on the same day. */
  private day = -1;
  private date = '';

  constructor(
    readonly store: UsageStore,
    private readonly clock: Clock,
    flushMs: number,
  ) {
    this.timer = setInterval(() => void this.flush().catch(() => {}), flushMs).unref();
  }

  /** An answered request made with key `id`. */
  answered(id: string, answer: Answered): void {
    const counts = this.today(id);
    counts.requests++;
    counts.by_status[answer.status] = (counts.by_status[answer.status] ?? 0) + 1;
    counts.by_endpoint[answer.endpoint] = (counts.by_endpoint[answer.endpoint] ?? 0) + 1;
    counts.bytes_sent += answer.bytes;
    if (answer.refused !== undefined) counts.refused[answer.refused] = (counts.refused[answer.refused] ?? 0) + 1;
  }

  refusal(id: string, refusal: Refusal): void {
    this.refusals.set(id, newer(this.refusals.get(id), refusal)!);
  }

  /** Milliseconds of heavy work charged to key `id`, whenever they are charged (after the answer too). */
  heavy(id: string, ms: number): void {
    this.today(id).heavy_ms += ms;
  }

  /** An export charged to key `id`'s daily export budget. */
  exported(id: string): void {
    this.today(id).exports++;
  }

  /** One key's counts per date from `start` to `end`: the store's and this process's not yet written. */
  async days(id: string, start: string, end: string): Promise<Map<string, DayCounts>> {
    const days = await this.store.days(id, start, end);
    for (const [date, counts] of this.pending.get(id) ?? [])
      if (date >= start && date <= end) days.set(date, addCounts(days.get(date) ?? emptyCounts(), counts));
    return days;
  }

  /** Every key's counts summed from `start` to `end`, this process's not yet written included. */
  async totals(start: string, end: string): Promise<Map<string, DayCounts>> {
    const sums = await this.store.totals(start, end);
    for (const [id, days] of this.pending)
      for (const [date, counts] of days) if (date >= start && date <= end) sums.set(id, addCounts(sums.get(id) ?? emptyCounts(), counts));
    return sums;
  }

  /** The key's last refusal known here, without waiting for the store when it cannot answer. */
  async lastRefused(id: string): Promise<Refusal | null> {
    const stored = await this.store.lastRefused(id).catch(() => null);
    return newer(stored, this.refusals.get(id));
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0 && this.refusals.size === 0) return;
    const batch: UsageBatch = { days: this.pending, refusals: this.refusals };
    this.pending = new Map();
    this.refusals = new Map();
    try {
      await this.store.add(batch);
    } catch (err) {
      // Kept for the next flush, with what was noted meanwhile.
      for (const [id, days] of batch.days) for (const [date, counts] of days) addCounts(this.counts(id, date), counts);
      for (const [id, refusal] of batch.refusals) this.refusal(id, refusal);
      throw err;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush().catch(() => {});
    await this.store.close();
  }

  private today(id: string): DayCounts {
    const day = Math.floor(this.clock() / DAY_MS);
    if (day !== this.day) {
      this.day = day;
      this.date = dateOf(day);
    }
    return this.counts(id, this.date);
  }

  private counts(id: string, date: string): DayCounts {
    let days = this.pending.get(id);
    if (!days) {
      days = new Map();
      this.pending.set(id, days);
    }
    let counts = days.get(date);
    if (!counts) {
      counts = emptyCounts();
      days.set(date, counts);
    }
    return counts;
  }
}
