import os from 'node:os';
import type { Redis } from 'ioredis';
import { answered } from '../state/redis-unavailable.ts';
import { DELIVERY_LOG_MS, type Delivery, type Endpoint, type Pending, type WebhookStore } from './store.ts';

const ENDPOINTS = 'dqs:webhooks:endpoints';
const PENDING = 'dqs:webhooks:pending';
const CURSOR = 'dqs:webhooks:cursor';
const log = (endpointId: string) => `dqs:webhooks:log:${endpointId}`;
const leaseKey = (name: string) => `dqs:webhooks:lease:${name}`;
const pendingField = (endpointId: string, seq: number) => `${endpointId} ${seq}`;

// Moves the cursor only forward, in one step, so exactly one replica queues each seq.
const ADVANCE = `local c = tonumber(redis.call('GET', KEYS[1]))
if c ~= nil and c >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1`;

/**
 * Webhooks shared by every replica: endpoints and attempts to make in two hashes, each
 * endpoint's log a sorted set scored by time, the cursor a string. Every read asks
 * Redis (a few small hashes, read once a tick), so no replica works from a stale copy.
 */
export class RedisWebhookStore implements WebhookStore {
  constructor(
    private readonly redis: Redis,
    /** What a lease this replica holds says: which process sends the attempt (host:pid). */
    private readonly holder = `${os.hostname()}:${process.pid}`,
  ) {}

  async list(keyId?: string): Promise<Endpoint[]> {
    const all = Object.values(await answered(this.redis.hgetall(ENDPOINTS))).map((text) => JSON.parse(text) as Endpoint);
    return all.filter((e) => keyId === undefined || e.key_id === keyId).sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
  }

  async get(id: string): Promise<Endpoint | undefined> {
    const text = await answered(this.redis.hget(ENDPOINTS, id));
    return text ? (JSON.parse(text) as Endpoint) : undefined;
  }

  async put(endpoint: Endpoint): Promise<void> {
    await answered(this.redis.hset(ENDPOINTS, endpoint.id, JSON.stringify(endpoint)));
  }

  async remove(id: string): Promise<void> {
    const fields = (await this.pending()).filter((p) => p.endpoint_id === id).map((p) => pendingField(id, p.seq));
    const batch = this.redis.multi().hdel(ENDPOINTS, id).del(log(id));
    if (fields.length) batch.hdel(PENDING, ...fields);
    await answered(batch.exec());
  }

  async schedule(pending: Pending): Promise<void> {
    await answered(this.redis.hset(PENDING, pendingField(pending.endpoint_id, pending.seq), JSON.stringify(pending)));
  }

  async unschedule(endpointId: string, seq: number): Promise<void> {
    await answered(this.redis.hdel(PENDING, pendingField(endpointId, seq)));
  }

  async pending(): Promise<Pending[]> {
    return Object.values(await answered(this.redis.hgetall(PENDING))).map((text) => JSON.parse(text) as Pending);
  }

  async record(endpointId: string, delivery: Delivery): Promise<void> {
    const at = Date.parse(delivery.at);
    await answered(
      this.redis
        .multi()
        .zadd(log(endpointId), String(at), JSON.stringify(delivery))
        .zremrangebyscore(log(endpointId), '-inf', `(${at - DELIVERY_LOG_MS}`)
        .exec(),
    );
  }

  async deliveries(endpointId: string, now: number): Promise<Delivery[]> {
    const texts = await answered(this.redis.zrevrangebyscore(log(endpointId), '+inf', String(now - DELIVERY_LOG_MS)));
    return texts.map((text) => JSON.parse(text) as Delivery);
  }

  async cursor(): Promise<number | undefined> {
    const text = await answered(this.redis.get(CURSOR));
    return text === null ? undefined : Number(text);
  }

  async advance(seq: number): Promise<boolean> {
    return (await answered(this.redis.eval(ADVANCE, 1, CURSOR, String(seq)))) === 1;
  }

  async lease(name: string, ms: number): Promise<boolean> {
    return (await answered(this.redis.set(leaseKey(name), this.holder, 'PX', ms, 'NX'))) === 'OK';
  }

  async close(): Promise<void> {}
}
