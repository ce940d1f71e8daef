export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/**
 * The first lines of the Redis scripts that count: `now`, in milliseconds, from ARGV[1]
 * when a clock is injected (tests), otherwise from Redis itself, so replicas whose
 * clocks disagree still agree on when a unit comes back.
 */
export const LUA_NOW = `local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[1])
end`;

/**
 * A rolling 60 s window (a sliding log: each unit comes back exactly 60 s after it
 * was spent) and, optionally, a UTC calendar day. A request is admitted only when
 * both have room, and then consumes from both; a refused request consumes nothing.
 */
export interface LimitPolicy {
  readonly perMinute: number;
  readonly perDay?: number;
}

export interface WindowState {
  readonly name: 'minute' | 'day';
  readonly limit: number;
  readonly remaining: number;
  /** Whole seconds until the next unit of this window comes back (0 when none is spent). */
  readonly resetSeconds: number;
  readonly windowSeconds: number;
}

export interface Decision {
  readonly allowed: boolean;
  /** When refused: whole seconds (at least 1) until this id's next request would be admitted. */
  readonly retryAfterSeconds: number;
  readonly windows: readonly WindowState[];
  /** True when the shared store did not answer: nothing was counted, and the windows show the whole quota (RedisLimiter). */
  readonly unavailable?: boolean;
}

/** Counts requests per id (an API key's id, a client address) against one policy. */
export interface Limiter {
  readonly policy: LimitPolicy;
  /** Admits and counts, or refuses without counting. Never rejects: a backend that cannot answer fails open. */
  consume(id: string): Promise<Decision>;
  /** What consume would decide now, counting nothing (limit headers on requests that are not charged). */
  peek(id: string): Promise<Decision>;
  close(): Promise<void>;
}

/** What a backend knows after its check-and-consume, turned into the shared Decision. */
export interface Usage {
  readonly now: number;
  readonly allowed: boolean;
  /** Admissions in the last 60 s and the oldest of them (undefined when none). */
  readonly minuteUsed: number;
  readonly oldest: number | undefined;
  /** Admissions since the start of the current UTC day. */
  readonly dayUsed: number;
}

const seconds = (ms: number) => Math.ceil(ms / 1000);

export function decide(policy: LimitPolicy, usage: Usage): Decision {
  const { now } = usage;
  const windows: WindowState[] = [
    {
      name: 'minute',
      limit: policy.perMinute,
      remaining: Math.max(0, policy.perMinute - usage.minuteUsed),
      resetSeconds: usage.oldest === undefined ? 0 : Math.max(1, seconds(usage.oldest + MINUTE_MS - now)),
      windowSeconds: MINUTE_MS / 1000,
    },
  ];
  if (policy.perDay !== undefined) {
    windows.push({
      name: 'day',
      limit: policy.perDay,
      remaining: Math.max(0, policy.perDay - usage.dayUsed),
      resetSeconds: seconds((Math.floor(now / DAY_MS) + 1) * DAY_MS - now),
      windowSeconds: DAY_MS / 1000,
    });
  }
  const retryAfterSeconds = usage.allowed ? 0 : Math.max(1, ...windows.filter((w) => w.remaining === 0).map((w) => w.resetSeconds));
  return { allowed: usage.allowed, retryAfterSeconds, windows };
}

/** The state a limiter reports when it does not count: the whole quota, nothing spent. */
export function uncounted(policy: LimitPolicy, now: number): Decision {
  return decide(policy, { now, allowed: true, minuteUsed: 0, oldest: undefined, dayUsed: 0 });
}
