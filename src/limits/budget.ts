import { MINUTE_MS } from './limiter.ts';

// The heavy-seconds budget (docs/api.md "Heavy requests"): each key may spend
// KEY_HEAVY_SECONDS_PER_MINUTE seconds of heavy work in any rolling 60 s. Work is
// charged when it ends, whatever its length, so a key may overshoot by one request;
// a key whose budget is spent starts no more heavy work until enough of its spending
// is older than 60 s. A charge is weighted, unlike a request limiter's units, so it is
// an interface of its own.

/** A key's budget as a request sees it. */
export interface BudgetState {
  /** Milliseconds of heavy work left in the rolling minute; 0 when spent. */
  readonly remainingMs: number;
  /** When spent: whole seconds (at least 1) until enough of the spending is older than 60 s. */
  readonly retryAfterSeconds: number;
  /** Milliseconds charged in the rolling minute, an overshoot included (GET /v1/usage). */
  readonly usedMs: number;
  /** Whole seconds until the oldest charge leaves the window (0 when none). */
  readonly resetSeconds: number;
  /** True when the shared store did not answer and this replica's own count stands in (RedisBudget). */
  readonly unavailable?: boolean;
}

export interface HeavyBudget {
  /** Milliseconds each key may spend a minute. */
  readonly perMinuteMs: number;
  /** The key's state now, charging nothing. Never rejects. */
  read(id: string): Promise<BudgetState>;
  /** Charges `ms` of heavy work to the key, and returns its state after. Never rejects. */
  charge(id: string, ms: number): Promise<BudgetState>;
  close(): Promise<void>;
}

/** One charge: when it was made and how much it spent. */
export interface Spent {
  readonly at: number;
  readonly ms: number;
}

/** The state of a key whose charges in the last minute are `spent`, oldest first. */
export function budgetState(perMinuteMs: number, spent: readonly Spent[], now: number): BudgetState {
  let used = 0;
  for (const { ms } of spent) used += ms;
  const resetSeconds = spent.length === 0 ? 0 : Math.max(1, Math.ceil((spent[0]!.at + MINUTE_MS - now) / 1000));
  if (used < perMinuteMs) return { remainingMs: perMinuteMs - used, retryAfterSeconds: 0, usedMs: used, resetSeconds };
  // Room comes back when the oldest charges leave the window: the first one after which what is left is under the limit.
  let left = used;
  for (const { at, ms } of spent) {
    left -= ms;
    if (left < perMinuteMs)
      return { remainingMs: 0, retryAfterSeconds: Math.max(1, Math.ceil((at + MINUTE_MS - now) / 1000)), usedMs: used, resetSeconds };
  }
  return { remainingMs: 0, retryAfterSeconds: 1, usedMs: used, resetSeconds };
}
