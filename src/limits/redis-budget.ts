import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { type BudgetState, budgetState, type HeavyBudget, type Spent } from './budget.ts';
import { LUA_NOW, MINUTE_MS } from './limiter.ts';
import { MemoryBudget } from './memory-budget.ts';

// One script prunes, charges and reads a key's spending atomically, so every replica
// sharing this Redis shares one budget per key. KEYS[1]: a sorted set of charges, each
// a member `<replica>:<sequence>:<ms>` scored by its time. Time: LUA_NOW.
const SCRIPT = `${LUA_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ${MINUTE_MS})
local ms = tonumber(ARGV[2])
if ms > 0 then
  redis.call('ZADD', KEYS[1], now, ARGV[3] .. ':' .. ms)
  redis.call('PEXPIRE', KEYS[1], ${MINUTE_MS})
end
local spent = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
table.insert(spent, now)
return spent
`;

/**
 * The heavy-seconds budget shared by every replica. Each charge is also kept in a
 * per-process budget: while Redis cannot answer (or is slower than its timeout), the
 * replica reads that one instead, so a key keeps a budget (this replica's) through an
 * outage and no request is refused or failed for it. An error line is logged at most
 * once a second.
 */
export class RedisBudget implements HeavyBudget {
  private readonly replica = randomBytes(6).toString('base64url');
  private sequence = 0;
  private readonly local: MemoryBudget;
  private lastLogged = 0;

  constructor(
    readonly perMinuteMs: number,
    private readonly options: { redis: Redis; prefix: string; log: Logger; clock?: Clock; onError?: () => void },
  ) {
    options.redis.defineCommand('dqsBudget', { numberOfKeys: 1, lua: SCRIPT });
    this.local = new MemoryBudget(perMinuteMs, options.clock ?? Date.now);
  }

  read(id: string): Promise<BudgetState> {
    return this.run(id, 0, this.local.update(id, 0));
  }

  charge(id: string, ms: number): Promise<BudgetState> {
    return this.run(id, Math.max(1, Math.round(ms)), this.local.update(id, ms));
  }

  private async run(id: string, ms: number, fallback: BudgetState): Promise<BudgetState> {
    const { redis, prefix, clock } = this.options;
    try {
      const reply = (await (redis as unknown as BudgetCommand).dqsBudget(
        `${prefix}{${id}}`,
        clock ? String(clock()) : '',
        ms,
        `${this.replica}:${this.sequence++}`,
      )) as string[];
      const now = Number(reply.pop());
      const spent: Spent[] = [];
      for (let i = 0; i < reply.length; i += 2)
        spent.push({ at: Number(reply[i + 1]), ms: Number(reply[i]!.slice(reply[i]!.lastIndexOf(':') + 1)) });
      return budgetState(this.perMinuteMs, spent, now);
    } catch (err) {
      this.options.onError?.();
      const now = Date.now();
      if (now - this.lastLogged >= 1000) {
        this.lastLogged = now;
        this.options.log.error({ err }, 'heavy budget unavailable in Redis: this replica counts it alone until Redis answers');
      }
      return { ...fallback, unavailable: true };
    }
  }

  async close(): Promise<void> {
    await this.local.close();
  }
}

interface BudgetCommand {
  dqsBudget(...args: Array<string | number>): Promise<unknown>;
}
