import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { latest, UseLog } from './use-log.ts';
import { hashKey, issueKey, looksLikeKey } from './key-format.ts';
import type { KeyRecord, KeyStore } from './store.ts';

const RECORDS = 'dqs:keys';
const VERSION = 'dqs:keys:version';
/** Key id → last use in ms; ZADD GT keeps the newest whichever replica writes last. */
const LAST_USED = 'dqs:keys:last-used';

/**
 * Keys shared by every replica: one Redis hash from key hash to record, and a
 * version counter bumped by every change. Each replica verifies from its own copy
 * (a Map get, as the file store does) and polls the version every `refreshMs`, so a
 * revocation reaches every replica within that interval plus one reload; a key this
 * replica has not seen yet (made on another one a moment ago) is looked up directly.
 * With Redis unreachable, known keys keep working from the copy, and an unknown key
 * cannot be told from an invalid one: verify() rejects and the caller answers 503.
 */
export class RedisKeyStore implements KeyStore {
  private byHash = new Map<string, KeyRecord>();
  private version: string | null = null;
  private readonly timer: NodeJS.Timeout;
  private failing = false;
  private readonly uses: UseLog;

  private constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
    refreshMs: number,
    flushMs: number,
  ) {
    this.timer = setInterval(() => void this.refresh(), refreshMs).unref();
    this.uses = new UseLog(async (uses) => {
      const batch = this.redis.multi();
      for (const [id, at] of uses) batch.zadd(LAST_USED, 'GT', String(at), id);
      await batch.exec();
    }, flushMs);
  }

  static async open(redis: Redis, log: Logger, refreshMs = 250, flushMs = 60_000): Promise<RedisKeyStore> {
    const store = new RedisKeyStore(redis, log, refreshMs, flushMs);
    await store.reload();
    return store;
  }

  async verify(key: string): Promise<KeyRecord | undefined> {
    const hash = hashKey(key);
    let record = this.byHash.get(hash);
    if (!record) {
      const text = await this.redis.hget(RECORDS, hash);
      if (!text) return undefined;
      record = JSON.parse(text) as KeyRecord;
      this.byHash.set(hash, record);
    }
    return record.revoked_at === null ? record : undefined;
  }

  async create(client: string, origin?: { inviteId: string }): Promise<{ key: string; record: KeyRecord }> {
    const { key, record } = issueKey(client, origin);
    try {
      await this.redis.multi().hset(RECORDS, record.hash, JSON.stringify(record)).incr(VERSION).exec();
    } catch (err) {
      // A timeout does not say whether Redis applied the write: the key is not
      // returned, so make sure it cannot work either.
      await this.redis.multi().hdel(RECORDS, record.hash).incr(VERSION).exec().catch(() => {});
      throw err;
    }
    return { key, record };
  }

  async list(): Promise<KeyRecord[]> {
    const [records, used] = await Promise.all([this.records(), this.redis.zrange(LAST_USED, '0', '-1', 'WITHSCORES')]);
    const stored = new Map<string, number>();
    for (let i = 0; i < used.length; i += 2) stored.set(used[i]!, Number(used[i + 1]));
    return records.map((r) => ({ ...r, last_used_at: latest(stored.has(r.id) ? new Date(stored.get(r.id)!).toISOString() : null, this.uses.unwritten(r.id)) }));
  }

  recordUse(id: string, at: number): void {
    this.uses.note(id, at);
  }

  private async records(): Promise<KeyRecord[]> {
    return Object.values(await this.redis.hgetall(RECORDS)).map((text) => JSON.parse(text) as KeyRecord);
  }

  async revoke(ref: string): Promise<KeyRecord | undefined> {
    const found = looksLikeKey(ref)
      ? await this.redis.hget(RECORDS, hashKey(ref)).then((text) => (text ? (JSON.parse(text) as KeyRecord) : undefined))
      : (await this.records()).find((r) => r.id === ref);
    if (!found) return undefined;
    if (found.revoked_at !== null) return found;
    const revoked = { ...found, revoked_at: new Date().toISOString() };
    await this.redis.multi().hset(RECORDS, found.hash, JSON.stringify(revoked)).incr(VERSION).exec();
    this.byHash.set(found.hash, revoked);
    return revoked;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.uses.close();
  }

  private async refresh(): Promise<void> {
    try {
      if ((await this.redis.get(VERSION)) !== this.version) await this.reload();
      if (this.failing) this.log.info('API keys refreshed from Redis again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.log.error({ err }, 'cannot refresh API keys from Redis: known keys keep working, revocations wait');
      this.failing = true;
    }
  }

  private async reload(): Promise<void> {
    // Read the version first: a change racing the read is picked up on the next poll.
    const version = await this.redis.get(VERSION);
    const records = await this.records();
    this.byHash = new Map(records.map((r) => [r.hash, r]));
    this.version = version;
  }
}
