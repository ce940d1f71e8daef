import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RedisLimiter } from '../src/limits/redis.ts';
import { createLogger } from '../src/log.ts';
import { type DayCounts, emptyCounts, type Refusal, type UsageBatch } from '../src/usage/counts.ts';
import { FileUsageStore } from '../src/usage/file-store.ts';
import { MemoryUsageStore } from '../src/usage/memory-store.ts';
import { RedisUsageStore } from '../src/usage/redis-store.ts';
import type { UsageStore } from '../src/usage/store.ts';
import { UsageLog } from '../src/usage/usage-log.ts';
import { REDIS_BINARY, REDIS_SKIP_REASON } from '../tools/redis-server.ts';
import { type ContractBackend, contractSuite } from './helpers/contract.ts';
import { redisWithClients } from './helpers/redis.ts';
import { tempDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// One contract for every UsageStore (undici's cacheStoreTests(Store) pattern), and the
// UsageLog in front of them: counts in memory, added per flush, never failing a request.

const NOW = Date.now();
const date = (daysAgo: number) => new Date(NOW - daysAgo * 86_400_000).toISOString().slice(0, 10);
const counts = (over: Partial<DayCounts>): DayCounts => ({ ...emptyCounts(), ...over });
const batch = (days: Record<string, Record<string, DayCounts>>, refusals: Record<string, Refusal> = {}): UsageBatch => ({
  days: new Map(Object.entries(days).map(([id, byDate]) => [id, new Map(Object.entries(byDate))])),
  refusals: new Map(Object.entries(refusals)),
});
const refusal = (at: string, limit: string): Refusal => ({ at, limit, path: '/v1/catalog', request_id: 'r', retry_after: 3 });

interface Backend extends ContractBackend<UsageStore> {
  /** Whether two stores may share the backend (replicas). */
  shared: boolean;
}

function usageStoreContract(name: string, backend: Backend) {
  const { test, open } = contractSuite(`usage store contract: ${name}`, backend);

  test("adds each flush's counts to the key's days; a day with none is absent", async () => {
    const store = await open();
    const one = counts({
      requests: 2,
      by_status: { 200: 1, 429: 1 },
      by_endpoint: { '/v1/catalog': 2 },
      refused: { minute: 1 },
      bytes_sent: 900,
    });
    await store.add(batch({ a: { [date(0)]: one, [date(2)]: counts({ requests: 1, exports: 1, heavy_ms: 1500 }) } }));
    await store.add(batch({ a: { [date(0)]: one }, b: { [date(0)]: counts({ requests: 7 }) } }));
    const days = await store.days('a', date(6), date(0));
    assert.equal([...days.keys()].sort(), [date(2), date(0)]);
    assert.equal(
      days.get(date(0)),
      counts({ requests: 4, by_status: { 200: 2, 429: 2 }, by_endpoint: { '/v1/catalog': 4 }, refused: { minute: 2 }, bytes_sent: 1800 }),
    );
    assert.equal(days.get(date(2)), counts({ requests: 1, exports: 1, heavy_ms: 1500 }));
    assert.equal([...(await store.days('a', date(1), date(0))).keys()], [date(0)], 'only the range');
    assert.equal((await store.days('nobody', date(6), date(0))).size, 0);
  });

  test('totals sum each key over the range', async () => {
    const store = await open();
    await store.add(batch({ a: { [date(0)]: counts({ requests: 3 }), [date(1)]: counts({ requests: 4, refused: { day: 1 } }) } }));
    await store.add(batch({ b: { [date(1)]: counts({ requests: 1 }), [date(5)]: counts({ requests: 9 }) } }));
    const totals = await store.totals(date(1), date(0));
    assert.equal(totals.get('a'), counts({ requests: 7, refused: { day: 1 } }));
    assert.equal(totals.get('b'), counts({ requests: 1 }));
  });

  test('keeps the newest refusal of each key', async () => {
    const store = await open();
    assert.is(await store.lastRefused('a'), null);
    await store.add(batch({}, { a: refusal('2026-12-01T10:00:00.000Z', 'minute') }));
    await store.add(batch({}, { a: refusal('2026-12-01T09:00:00.000Z', 'day') }));
    assert.is((await store.lastRefused('a'))?.limit, 'minute', 'an older one does not replace it');
    await store.add(batch({}, { a: refusal('2026-12-01T11:00:00.000Z', 'busy') }));
    assert.equal(await store.lastRefused('a'), refusal('2026-12-01T11:00:00.000Z', 'busy'));
  });

  test('keeps 92 days: older ones are dropped', async () => {
    const store = await open();
    await store.add(batch({ a: { [date(91)]: counts({ requests: 1 }), [date(92)]: counts({ requests: 1 }) } }));
    assert.equal([...(await store.days('a', date(120), date(0))).keys()], [date(91)]);
  });

  if (backend.shared)
    test('two replicas adding to one day sum', async () => {
      const [a, b] = [await open(), await open()];
      await Promise.all([
        a.add(batch({ k: { [date(0)]: counts({ requests: 2 }) } })),
        b.add(batch({ k: { [date(0)]: counts({ requests: 3 }) } })),
      ]);
      assert.is((await a.days('k', date(0), date(0))).get(date(0))?.requests, 5);
      assert.is((await b.totals(date(0), date(0))).get('k')?.requests, 5);
    });

  test.run();
}

usageStoreContract('memory', { open: async () => new MemoryUsageStore(Date.now), reset: async () => {}, shared: false });

let dir = '';
usageStoreContract('file', {
  before: async () => {
    dir = await tempDir();
  },
  after: () => fs.rm(dir, { recursive: true, force: true }),
  // A store over what the last one wrote: every case reads back from the file.
  open: async () => {
    const writer = await FileUsageStore.open(dir, Date.now);
    return {
      add: async (b: UsageBatch) => {
        await writer.add(b);
      },
      days: async (...args: [string, string, string]) => (await FileUsageStore.open(dir, Date.now)).days(...args),
      totals: async (...args: [string, string]) => (await FileUsageStore.open(dir, Date.now)).totals(...args),
      lastRefused: async (id: string) => (await FileUsageStore.open(dir, Date.now)).lastRefused(id),
      close: () => writer.close(),
    };
  },
  reset: () => fs.rm(path.join(dir, 'usage.json'), { force: true }),
  shared: false,
});

let fixture: Awaited<ReturnType<typeof redisWithClients>> | undefined;
if (REDIS_BINARY) {
  usageStoreContract('redis', {
    before: async () => {
      fixture = await redisWithClients(2, 1000);
    },
    after: async () => {
      await fixture?.stop();
    },
    open: async () => new RedisUsageStore(fixture!.clients[Math.floor(Math.random() * 2)]!),
    reset: async () => {
      await fixture!.clients[0]!.flushall();
    },
    shared: true,
  });
} else skippedSuite('usage store contract: redis', REDIS_SKIP_REASON);

const log = suite('UsageLog: counts in memory, adds a batch per flush, never fails a request');

log('reads add what is not written yet; a flush the store refuses is kept for the next', async () => {
  let failing = true;
  const memory = new MemoryUsageStore(Date.now);
  const store: UsageStore = {
    add: async (b) => {
      if (failing) throw new Error('store down');
      await memory.add(b);
    },
    days: (...args) => memory.days(...args),
    totals: (...args) => memory.totals(...args),
    lastRefused: async () => {
      throw new Error('store down');
    },
    close: async () => {},
  };
  const usage = new UsageLog(store, Date.now, 3_600_000);
  usage.answered('a', { status: 200, endpoint: '/v1/catalog', bytes: 100 });
  usage.answered('a', { status: 429, endpoint: '/v1/catalog', bytes: 50, refused: 'minute' });
  usage.heavy('a', 250);
  usage.exported('a');
  usage.refusal('a', refusal(new Date().toISOString(), 'minute'));
  const expected = counts({
    requests: 2,
    by_status: { 200: 1, 429: 1 },
    by_endpoint: { '/v1/catalog': 2 },
    refused: { minute: 1 },
    exports: 1,
    bytes_sent: 150,
    heavy_ms: 250,
  });
  assert.equal((await usage.days('a', date(0), date(0))).get(date(0)), expected);
  assert.is((await usage.lastRefused('a'))?.limit, 'minute', 'a store that cannot answer: what this process knows');
  await usage.flush().then(
    () => assert.unreachable('the store refused'),
    () => {},
  );
  assert.equal((await usage.days('a', date(0), date(0))).get(date(0)), expected, 'kept, not lost or doubled');
  failing = false;
  await usage.flush();
  assert.equal((await memory.days('a', date(0), date(0))).get(date(0)), expected);
  assert.equal((await usage.totals(date(0), date(0))).get('a'), expected, 'written once');
  await usage.close();
});
log.run();

if (REDIS_BINARY) {
  const outage = suite('limiter state while Redis does not answer');
  outage('the Redis limiter says its figures are unavailable, and counts nothing', async () => {
    const redis = await redisWithClients(1, 100);
    try {
      const limiter = new RedisLimiter(
        { perMinute: 5, perDay: 10 },
        { redis: redis.clients[0]!, prefix: `test:${randomBytes(4).toString('hex')}:`, log: createLogger('silent') },
      );
      await limiter.consume('a');
      assert.is((await limiter.peek('a')).unavailable, undefined);
      assert.is((await limiter.peek('a')).windows[0]!.remaining, 4);
      redis.server.pause();
      try {
        const peeked = await limiter.peek('a');
        assert.is(peeked.unavailable, true);
        assert.ok(peeked.allowed);
      } finally {
        redis.server.resume();
      }
    } finally {
      await redis.stop();
    }
  });
  outage.run();
}
