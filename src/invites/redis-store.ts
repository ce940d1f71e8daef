import type { ChainableCommander, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RedisCopy, results } from '../state/redis-copy.ts';
import { answered } from '../state/redis-unavailable.ts';
import { hashToken, type InviteRecord, type InviteStatus, type InviteStore, inviteStatus, issueInvite, type Spend } from './store.ts';

const RECORDS = 'dqs:invites';
/** Token hash → how the invite was closed; HSETNX on it is the one atomic claim. */
const CLOSED = 'dqs:invites:closed';
/** Bumped by every change, so each replica's copy follows. */
const VERSION = 'dqs:invites:version';

type Closing = Pick<InviteRecord, 'claimed_at' | 'key_id' | 'revoked_at'>;

const merge = (text: string, closed: string | null | undefined): InviteRecord => ({
  ...(JSON.parse(text) as InviteRecord),
  ...(closed ? (JSON.parse(closed) as Closing) : {}),
});

/**
 * Invites shared by every replica. The record is written once; claiming or revoking
 * writes the token hash into a second hash with HSETNX, which exactly one of any
 * number of racing replicas wins. Every answer comes from Redis; each replica also
 * keeps a copy (both hashes as stored, its own changes added at once) only to write
 * back if Redis comes back empty, where HSETNX again lets a claim or revocation win
 * over an invite another copy still holds open.
 */
export class RedisInviteStore implements InviteStore {
  private records = new Map<string, string>();
  private closed = new Map<string, string>();
  private copy: RedisCopy | undefined;

  private constructor(private readonly redis: Redis) {}

  static async open(redis: Redis, log: Logger, options: { refreshMs?: number; onDataLost?: () => void } = {}): Promise<RedisInviteStore> {
    const store = new RedisInviteStore(redis);
    store.copy = await RedisCopy.open(
      redis,
      {
        what: 'invites',
        whileFailing: 'claim pages cannot answer until it does',
        versionKey: VERSION,
        read: (batch) => batch.hgetall(RECORDS).hgetall(CLOSED),
        load: ([records, closed]) => {
          store.records = new Map(Object.entries(records as Record<string, string>));
          store.closed = new Map(Object.entries(closed as Record<string, string>));
        },
        writeBack: (batch) => store.writeBack(batch),
      },
      { log, refreshMs: options.refreshMs ?? 250, onLost: options.onDataLost ?? (() => {}) },
    );
    return store;
  }

  async create(input: { client: string; expiresAt: number; replaces: string | null }, now: number) {
    const issued = issueInvite(input, now);
    const text = JSON.stringify(issued.record);
    results(await answered(this.redis.multi().hset(RECORDS, issued.record.hash, text).incr(VERSION).exec()));
    this.records.set(issued.record.hash, text);
    return issued;
  }

  async find(token: string): Promise<InviteRecord | undefined> {
    return this.byHash(hashToken(token));
  }

  async spend(token: string, now: number): Promise<Spend> {
    const hash = hashToken(token);
    const found = await this.byHash(hash);
    if (!found) return { ok: false, status: 'unknown' };
    const status = inviteStatus(found, now);
    if (status !== 'open') return { ok: false, status };
    const claim: Closing = { claimed_at: new Date(now).toISOString(), key_id: null, revoked_at: null };
    if (await this.closeInvite(hash, claim)) return { ok: true, record: { ...found, ...claim } };
    const lost = (await this.byHash(hash))!;
    return { ok: false, status: inviteStatus(lost, now) as Exclude<InviteStatus, 'open'> };
  }

  async settle(record: InviteRecord, keyId: string): Promise<void> {
    const text = JSON.stringify({ claimed_at: record.claimed_at, key_id: keyId, revoked_at: null } satisfies Closing);
    results(await this.redis.multi().hset(CLOSED, record.hash, text).incr(VERSION).exec());
    this.closed.set(record.hash, text);
  }

  async release(record: InviteRecord): Promise<void> {
    results(await this.redis.multi().hdel(CLOSED, record.hash).incr(VERSION).exec());
    this.closed.delete(record.hash);
  }

  async list(): Promise<InviteRecord[]> {
    const [records, closed] = await answered(Promise.all([this.redis.hgetall(RECORDS), this.redis.hgetall(CLOSED)]));
    return Object.entries(records).map(([hash, text]) => merge(text, closed[hash]));
  }

  async revoke(id: string, now: number): Promise<InviteRecord | undefined> {
    const found = (await this.list()).find((r) => r.id === id);
    if (!found) return undefined;
    await this.closeInvite(found.hash, { claimed_at: null, key_id: null, revoked_at: new Date(now).toISOString() });
    return this.byHash(found.hash);
  }

  async close(): Promise<void> {
    this.copy?.close();
  }

  /** Closes an invite (a claim or a revocation) unless it is closed already; true when this call did. */
  private async closeInvite(hash: string, closing: Closing): Promise<boolean> {
    const text = JSON.stringify(closing);
    const [won] = results(await answered(this.redis.multi().hsetnx(CLOSED, hash, text).incr(VERSION).exec()));
    if (won === 1) this.closed.set(hash, text);
    return won === 1;
  }

  private async byHash(hash: string): Promise<InviteRecord | undefined> {
    const [record, closed] = await Promise.all([this.redis.hget(RECORDS, hash), this.redis.hget(CLOSED, hash)]);
    return record ? merge(record, closed) : undefined;
  }

  /** Records fill gaps only, and so do closings: the first claim or revocation to land stays, an open copy never reopens one. */
  private writeBack(batch: ChainableCommander): number {
    for (const [hash, text] of this.records) batch.hsetnx(RECORDS, hash, text);
    for (const [hash, text] of this.closed) batch.hsetnx(CLOSED, hash, text);
    return this.records.size;
  }
}
