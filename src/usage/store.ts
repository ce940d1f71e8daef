import type { DayCounts, Refusal, UsageBatch } from './counts.ts';

/**
 * Where each key's daily usage is kept, for GET /v1/usage/daily and `npm run admin --
 * usage`: in memory, in STATE_DIR/usage.json, or in Redis (REDIS_URL) where every
 * replica adds to the same days. Nothing writes here per request: a UsageLog adds a
 * batch per flush. Days older than KEEP_DAYS are dropped.
 */
export interface UsageStore {
  /** Adds a flush's counts to the days they name, and keeps each key's newer refusal. */
  add(batch: UsageBatch): Promise<void>;
  /** One key's counts per date from `start` to `end` (YYYY-MM-DD, both included); dates without any are absent. */
  days(id: string, start: string, end: string): Promise<Map<string, DayCounts>>;
  /** Every key's counts summed from `start` to `end`, by key id. */
  totals(start: string, end: string): Promise<Map<string, DayCounts>>;
  /** The last request a limit refused for the key, or null. */
  lastRefused(id: string): Promise<Refusal | null>;
  close(): Promise<void>;
}
