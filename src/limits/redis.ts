import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { DAY_MS, type Decision, decide, type Limiter, type LimitPolicy, LUA_NOW, MINUTE_MS, uncounted } from './limiter.ts';

// One script checks and consumes both windows atomically, so every replica sharing
// this Redis shares one budget per id. KEYS[1]: sorted set of admission times (the
// sliding log); KEYS[2]: hash {day, used} for the UTC day. Time: LUA_NOW.
const SCRIPT = `${LUA_NOW}
local perMinute = tonumber(ARGV[2])
local perDay = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ${MINUTE_MS})
local used = redis.call('ZCARD', KEYS[1])
local today = math.floor(now / ${DAY_MS})
local dayUsed = 0
if perDay >= 0 then
  local day = redis.call('HMGET', KEYS[2], 'day', 'used')
  if tonumber(day[1]) == today then dayUsed = tonumber(day[2]) end
end
local allowed = 0
if used < perMinute and (perDay < 0 or dayUsed < perDay) then
  allowed = 1
end
if allowed == 1 and ARGV[5] ~= 'peek' then
  used = used + 1
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ${MINUTE_MS})
  if perDay >= 0 then
    dayUsed = dayUsed + 1
    redis.call('HSET', KEYS[2], 'day', today, 'used', dayUsed)
    redis.call('PEXPIRE', KEYS[2], (today + 1) * ${DAY_MS} - now)
  end
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2] or ''
return {allowed, used, dayUsed, oldest, now}
`;

type Reply = [number, number, number, string, number];

/**
 * Shared limits for every replica. Redis unreachable or slower than its timeout:
 * the request is admitted (fail open) and an error line is logged, at most one a
 * second, because refusing every client for an outage of ours is the worse failure.
 */
export class RedisLimiter implements Limiter {
  /** Members of the sorted set must be unique, also for two admissions in one millisecond. */
  private readonly replica = randomBytes(6).toString('base64url');
  private sequence = 0;
  private lastLogged = 0;
  private suppressed = 0;

  constructor(
    readonly policy: LimitPolicy,
    private readonly options: { redis: Redis; prefix: string; log: Logger; clock?: Clock; onError?: () => void },
  ) {
    options.redis.defineCommand('dqsLimit', { numberOfKeys: 2, lua: SCRIPT });
  }

  async consume(id: string): Promise<Decision> {
    return this.run(id, 'consume');
  }

  async peek(id: string): Promise<Decision> {
    return this.run(id, 'peek');
  }

  private async run(id: string, mode: 'consume' | 'peek'): Promise<Decision> {
    const { redis, prefix, clock } = this.options;
    const key = `${prefix}{${id}}`;
    try {
      const [allowed, minuteUsed, dayUsed, oldest, now] = (await (redis as unknown as LimitCommand).dqsLimit(
        `${key}:minute`,
        `${key}:day`,
        clock ? String(clock()) : '',
        this.policy.perMinute,
        this.policy.perDay ?? -1,
        `${this.replica}:${this.sequence++}`,
        mode,
      )) as Reply;
      return decide(this.policy, {
        now,
        allowed: allowed === 1,
        minuteUsed,
        oldest: oldest === '' ? undefined : Number(oldest),
        dayUsed,
      });
    } catch (err) {
      this.options.onError?.();
      this.logFailure(err as Error);
      return { ...uncounted(this.policy, clock ? clock() : Date.now()), unavailable: true };
    }
  }

  async close(): Promise<void> {}

  private logFailure(err: Error): void {
    const now = Date.now();
    if (now - this.lastLogged < 1000) {
      this.suppressed++;
      return;
    }
    this.options.log.error({ err, suppressed: this.suppressed }, 'rate limiter unavailable: request admitted uncounted (fail open)');
    this.lastLogged = now;
    this.suppressed = 0;
  }
}

interface LimitCommand {
  dqsLimit(...args: Array<string | number>): Promise<unknown>;
}
