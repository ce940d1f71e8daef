import type { Redis } from 'ioredis';
import { results } from '../state/redis-copy.ts';
import { answered } from '../state/redis-unavailable.ts';
import { addCounts, DAY_MS, type DayCounts, datesFrom, dayOf, emptyCounts, KEEP_DAYS, type Refusal, type UsageBatch } from './counts.ts';
import type { UsageStore } from './store.ts';

const PREFIX = 'dqs:usage:';
/** A key's refusal replaces the stored one only when newer (ISO instants compare as text), whichever replica writes last. */
const NEWER_REFUSAL = `local old = redis.call('GET', KEYS[1])
if old and cjson.decode(old).at >= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1`;

/** The hash fields of a day's counts: the totals by name, the tallies prefixed. */
const TALLIES = { by_status: 's:', by_endpoint: 'e:', refused: 'r:' } as const;
const TOTALS = ['requests', 'exports', 'bytes_sent', 'heavy_ms'] as const;

const dayKey = (id: string, date: string) => `${PREFIX}{${id}}:${date}`;
const keysOf = (date: string) => `${PREFIX}keys:${date}`;
/** Seconds since the epoch when a date's counts leave the KEEP_DAYS window. */
const leavesAt = (date: string) => ((dayOf(date) + KEEP_DAYS) * DAY_MS) / 1000;

/**
 * Usage shared by every replica: one hash per key and UTC date, added to with
 * HINCRBY (so two replicas' flushes sum), a set of the keys active each date (for the
 * operator's --top), and each key's newest refusal. Each expires once it leaves the
 * KEEP_DAYS window. A command Redis does not answer rejects with RedisUnavailableError;
 * the UsageLog keeps the batch for its next flush.
 */
export class RedisUsageStore implements UsageStore {
  constructor(private readonly redis: Redis) {
    redis.defineCommand('dqsNewerRefusal', { numberOfKeys: 1, lua: NEWER_REFUSAL });
  }

  async add(batch: UsageBatch): Promise<void> {
    const multi = this.redis.pipeline();
    for (const [id, days] of batch.days) {
      for (const [date, counts] of days) {
        const key = dayKey(id, date);
        for (const name of TOTALS) if (counts[name] !== 0) multi.hincrby(key, name, counts[name]);
        for (const [tally, prefix] of Object.entries(TALLIES))
          for (const [name, n] of Object.entries(counts[tally as keyof typeof TALLIES])) multi.hincrby(key, prefix + name, n);
        multi.expireat(key, leavesAt(date));
        multi.sadd(keysOf(date), id);
        multi.expireat(keysOf(date), leavesAt(date));
      }
    }
    for (const [id, refusal] of batch.refusals)
      (multi as unknown as RefusalCommand).dqsNewerRefusal(
        `${PREFIX}refused:{${id}}`,
        refusal.at,
        JSON.stringify(refusal),
        KEEP_DAYS * 86_400,
      );
    results(await answered(multi.exec()));
  }

  async days(id: string, start: string, end: string): Promise<Map<string, DayCounts>> {
    const dates = datesFrom(start, end);
    const multi = this.redis.pipeline();
    for (const date of dates) multi.hgetall(dayKey(id, date));
    const hashes = results(await answered(multi.exec())) as Array<Record<string, string>>;
    const found = new Map<string, DayCounts>();
    dates.forEach((date, i) => {
      if (Object.keys(hashes[i]!).length > 0) found.set(date, parse(hashes[i]!));
    });
    return found;
  }

  async totals(start: string, end: string): Promise<Map<string, DayCounts>> {
    const dates = datesFrom(start, end);
    const members = this.redis.pipeline();
    for (const date of dates) members.smembers(keysOf(date));
    const ids = results(await answered(members.exec())) as string[][];
    const reads = this.redis.pipeline();
    const order: string[] = [];
    dates.forEach((date, i) => {
      for (const id of ids[i]!) {
        order.push(id);
        reads.hgetall(dayKey(id, date));
      }
    });
    const hashes = results(await answered(reads.exec())) as Array<Record<string, string>>;
    const sums = new Map<string, DayCounts>();
    order.forEach((id, i) => {
      sums.set(id, addCounts(sums.get(id) ?? emptyCounts(), parse(hashes[i]!)));
    });
    return sums;
  }

  async lastRefused(id: string): Promise<Refusal | null> {
    const text = await answered(this.redis.get(`${PREFIX}refused:{${id}}`));
    return text ? (JSON.parse(text) as Refusal) : null;
  }

  async close(): Promise<void> {}
}

function parse(hash: Record<string, string>): DayCounts {
  const counts = emptyCounts();
  for (const [field, value] of Object.entries(hash)) {
    const n = Number(value);
    const tally = (Object.keys(TALLIES) as Array<keyof typeof TALLIES>).find((name) => field.startsWith(TALLIES[name]));
    if (tally) counts[tally][field.slice(2)] = n;
    else if ((TOTALS as readonly string[]).includes(field)) counts[field as (typeof TOTALS)[number]] = n;
  }
  return counts;
}

interface RefusalCommand {
  dqsNewerRefusal(...args: Array<string | number>): void;
}
