import type { Redis } from 'ioredis';
import { hashToken, inviteStatus, type InviteStatus, issueInvite, type InviteRecord, type InviteStore, type Spend } from './store.ts';

const RECORDS = 'dqs:invites';
/** Token hash → how the invite was closed; HSETNX on it is the one atomic claim. */
const CLOSED = 'dqs:invites:closed';

type Closing = Pick<InviteRecord, 'claimed_at' | 'key_id' | 'revoked_at'>;

const merge = (text: string, closed: string | null | undefined): InviteRecord => ({
  ...(JSON.parse(text) as InviteRecord),
  ...(closed ? (JSON.parse(closed) as Closing) : {}),
});

/**
 * Invites shared by every replica. The record is written once; claiming or revoking
 * writes the token hash into a second hash with HSETNX, which exactly one of any
 * number of racing replicas wins.
 */
export class RedisInviteStore implements InviteStore {
  constructor(private readonly redis: Redis) {}

  async create(input: { client: string; expiresAt: number; replaces: string | null }, now: number) {
    const issued = issueInvite(input, now);
    await this.redis.hset(RECORDS, issued.record.hash, JSON.stringify(issued.record));
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
    if ((await this.redis.hsetnx(CLOSED, hash, JSON.stringify(claim))) === 1) return { ok: true, record: { ...found, ...claim } };
    const lost = (await this.byHash(hash))!;
    return { ok: false, status: inviteStatus(lost, now) as Exclude<InviteStatus, 'open'> };
  }

  async settle(record: InviteRecord, keyId: string): Promise<void> {
    const closing: Closing = { claimed_at: record.claimed_at, key_id: keyId, revoked_at: null };
    await this.redis.hset(CLOSED, record.hash, JSON.stringify(closing));
  }

  async release(record: InviteRecord): Promise<void> {
    await this.redis.hdel(CLOSED, record.hash);
  }

  async list(): Promise<InviteRecord[]> {
    const [records, closed] = await Promise.all([this.redis.hgetall(RECORDS), this.redis.hgetall(CLOSED)]);
    return Object.entries(records).map(([hash, text]) => merge(text, closed[hash]));
  }

  async revoke(id: string, now: number): Promise<InviteRecord | undefined> {
    const found = (await this.list()).find((r) => r.id === id);
    if (!found) return undefined;
    const closing: Closing = { claimed_at: null, key_id: null, revoked_at: new Date(now).toISOString() };
    await this.redis.hsetnx(CLOSED, found.hash, JSON.stringify(closing));
    return this.byHash(found.hash);
  }

  async close(): Promise<void> {}

  private async byHash(hash: string): Promise<InviteRecord | undefined> {
    const [record, closed] = await Promise.all([this.redis.hget(RECORDS, hash), this.redis.hget(CLOSED, hash)]);
    return record ? merge(record, closed) : undefined;
  }
}
