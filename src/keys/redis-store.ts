import type { ChainableCommander, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RedisCopy, results } from '../state/redis-copy.ts';
import { answered, RedisUnavailableError } from '../state/redis-unavailable.ts';
import { hashKey, issueKey, looksLikeKey } from './key-format.ts';
import { activeRecord, type KeyRecord, type KeyStore } from './store.ts';
import { latest, UseLog } from './use-log.ts';

const RECORDS = 'dqs:keys';
const VERSION = 'dqs:keys:version';
/** Key id → last use in ms; ZADD GT keeps the newest whichever replica writes last. */
const LAST_USED = 'dqs:keys:last-used';

/**
 * Keys shared by every replica: one Redis hash from key hash to record, and a
 * version counter bumped by every change. Each replica verifies from its own copy
 * (a Map get, as the file store does), which RedisCopy reloads when the version moves
 * (polled every `refreshMs`), so a revocation reaches every replica within that
 * interval plus one reload; a key this replica has not seen yet (made on another one a
 * moment ago) is looked up directly. With Redis unreachable, known keys keep working
 * from the copy, and an unknown key cannot be told from an invalid one: verify()
 * rejects and the caller answers 503. When Redis comes back empty, the copy is written
 * back, revocations winning over active records whichever replica writes first.
 */
export class RedisKeyStore implements KeyStore {
  private byHash = new Map<string, KeyRecord>();
  /** The newest use of each key this replica has written: what it puts back if Redis loses its data. */
  private readonly written = new Map<string, number>();
  private readonly uses: UseLog;
  private copy: RedisCopy | undefined;

  private constructor(
    private readonly redis: Redis,
    flushMs: number,
  ) {
    this.uses = new UseLog(async (uses) => {
      const batch = this.redis.multi();
      for (const [id, at] of uses) batch.zadd(LAST_USED, 'GT', String(at), id);
      results(await batch.exec());
      for (const [id, at] of uses) this.written.set(id, Math.max(at, this.written.get(id) ?? 0));
    }, flushMs);
  }

  static async open(
    redis: Redis,
    log: Logger,
    options: { refreshMs?: number; flushMs?: number; onDataLost?: () => void } = {},
  ): Promise<RedisKeyStore> {
    const store = new RedisKeyStore(redis, options.flushMs ?? 60_000);
    store.copy = await RedisCopy.open(
      redis,
      {
        what: 'API keys',
        whileFailing: 'known keys keep working, revocations wait',
        versionKey: VERSION,
        read: (batch) => batch.hgetall(RECORDS),
        load: ([records]) => {
          store.byHash = new Map(parseRecords(records as Record<string, string>).map((r) => [r.hash, r]));
        },
        writeBack: (batch) => store.writeBack(batch),
      },
      { log, refreshMs: options.refreshMs ?? 250, onLost: options.onDataLost ?? (() => {}) },
    );
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
    return activeRecord(record);
  }

  async known(key: string): Promise<KeyRecord | undefined> {
    return activeRecord(this.byHash.get(hashKey(key)));
  }

  async create(client: string, origin?: { inviteId: string }): Promise<{ key: string; record: KeyRecord }> {
    const { key, record } = issueKey(client, origin);
    try {
      await this.redis.multi().hset(RECORDS, record.hash, JSON.stringify(record)).incr(VERSION).exec();
    } catch (err) {
      // A timeout does not say whether Redis applied the write: the key is not
      // returned, so make sure it cannot work either.
      await this.redis
        .multi()
        .hdel(RECORDS, record.hash)
        .incr(VERSION)
        .exec()
        .catch(() => {});
      throw new RedisUnavailableError(err);
    }
    // In the copy at once: if Redis lost its data before the next reload, this replica still writes it back.
    this.byHash.set(record.hash, record);
    return { key, record };
  }

  async list(): Promise<KeyRecord[]> {
    const [records, used] = await answered(Promise.all([this.records(), this.redis.zrange(LAST_USED, '0', '-1', 'WITHSCORES')]));
    const stored = new Map<string, number>();
    for (let i = 0; i < used.length; i += 2) stored.set(used[i]!, Number(used[i + 1]));
    return records.map((r) => ({
      ...r,
      last_used_at: latest(stored.has(r.id) ? new Date(stored.get(r.id)!).toISOString() : null, this.uses.unwritten(r.id)),
    }));
  }

  recordUse(id: string, at: number): void {
    this.uses.note(id, at);
  }

  private async records(): Promise<KeyRecord[]> {
    return parseRecords(await this.redis.hgetall(RECORDS));
  }

  async revoke(ref: string): Promise<KeyRecord | undefined> {
    const found = looksLikeKey(ref)
      ? await answered(this.redis.hget(RECORDS, hashKey(ref))).then((text) => (text ? (JSON.parse(text) as KeyRecord) : undefined))
      : (await answered(this.records())).find((r) => r.id === ref);
    if (!found) return undefined;
    if (found.revoked_at !== null) return found;
    const revoked = { ...found, revoked_at: new Date().toISOString() };
    await answered(this.redis.multi().hset(RECORDS, found.hash, JSON.stringify(revoked)).incr(VERSION).exec());
    this.byHash.set(found.hash, revoked);
    return revoked;
  }

  async close(): Promise<void> {
    this.copy?.close();
    await this.uses.close();
  }

  /** A revoked record always overwrites, an active one only fills a gap: no replica brings a revoked key back. */
  private writeBack(batch: ChainableCommander): number {
    for (const record of this.byHash.values()) {
      const text = JSON.stringify(record);
      if (record.revoked_at === null) batch.hsetnx(RECORDS, record.hash, text);
      else batch.hset(RECORDS, record.hash, text);
    }
    for (const [id, at] of this.written) batch.zadd(LAST_USED, 'GT', String(at), id);
    return this.byHash.size;
  }
}

const parseRecords = (stored: Record<string, string>) => Object.values(stored).map((text) => JSON.parse(text) as KeyRecord);
