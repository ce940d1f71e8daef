/**
 * When the client tries again (spec 7's guidance): a 429 after its Retry-After; a
 * 5xx or a network failure after an exponential back-off with full jitter (a random
 * wait between 0 and base × 2^attempt, capped), so many clients that failed together
 * do not come back together. Bounded twice: in attempts, and in the time one request
 * may spend waiting; a wait that would pass either bound is not started.
 */
export interface RetryPolicy {
  /** Retries after the first attempt (default 5). */
  readonly maxRetries: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** All waits of one request together, Retry-After included (default 3 minutes). */
  readonly maxWaitMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 5, baseDelayMs: 250, maxDelayMs: 10_000, maxWaitMs: 180_000 };

/** Why the client is about to wait, for progress displays and logs. */
export interface RetryEvent {
  readonly reason: 'rate-limited' | 'server-error' | 'network-error';
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  readonly waitMs: number;
  /** The status of the failed attempt; undefined for a network error. */
  readonly status: number | undefined;
}

/** The wait before retry number `attempt` (from 1) after a 5xx or a network failure. */
export function backoffMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  return Math.round(random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1)));
}

/** Retry-After in delta seconds (what this service sends) or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
