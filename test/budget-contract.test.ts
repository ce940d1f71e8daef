import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Clock } from '../src/clock.ts';
import type { HeavyBudget } from '../src/limits/budget.ts';
import { MemoryBudget } from '../src/limits/memory-budget.ts';
import { NoopBudget } from '../src/limits/noop-budget.ts';
import { RedisBudget } from '../src/limits/redis-budget.ts';
import { createLogger } from '../src/log.ts';
import { REDIS_BINARY, REDIS_SKIP_REASON } from '../tools/redis-server.ts';
import { redisWithClients } from './helpers/redis.ts';
import { skippedSuite } from './helpers/skip.ts';

// One contract for every heavy-seconds budget that counts (as the limiters'), with the
// clock moved by hand: weighted charges in a rolling minute, and when room comes back.

type MakeBudget = (perMinuteMs: number, clock: Clock) => HeavyBudget;

const NOON = Date.UTC(2026, 10, 28, 12, 0, 0);

function budgetContract(name: string, make: () => MakeBudget, hooks: { before?: () => Promise<void>; after?: () => Promise<void> } = {}) {
  const test = suite(`heavy budget contract: ${name}`);
  let now = NOON;
  const clock = () => now;
  const budget = (perMinuteMs = 60_000) => make()(perMinuteMs, clock);
  if (hooks.before) test.before(hooks.before);
  if (hooks.after) test.after(hooks.after);
  test.before.each(() => {
    now = NOON;
  });

  test('charges add up per key; reading charges nothing', async () => {
    const b = budget();
    assert.equal(await b.read('a'), { remainingMs: 60_000, retryAfterSeconds: 0, usedMs: 0, resetSeconds: 0 });
    assert.is((await b.charge('a', 25_000)).remainingMs, 35_000);
    now += 1000;
    assert.is((await b.charge('a', 30_000)).remainingMs, 5_000);
    assert.is((await b.read('a')).remainingMs, 5_000);
    assert.is((await b.read('b')).remainingMs, 60_000, 'another key is untouched');
  });

  test('spent past the limit: no room, and Retry-After until enough of the spending is a minute old', async () => {
    const b = budget();
    await b.charge('a', 20_000);
    now += 10_000;
    await b.charge('a', 20_000);
    now += 10_000;
    // Overshoots: a job is charged whole when it ends.
    const spent = await b.charge('a', 30_000);
    assert.equal(
      spent,
      { remainingMs: 0, retryAfterSeconds: 40, usedMs: 70_000, resetSeconds: 40 },
      'the overshoot is used; the first charge leaves at +60 s, leaving 50 s spent: under 60',
    );
    now += 39_000;
    assert.is((await b.read('a')).remainingMs, 0);
    now += 1_000;
    assert.equal(await b.read('a'), { remainingMs: 10_000, retryAfterSeconds: 0, usedMs: 50_000, resetSeconds: 10 });
    now += 15_000;
    assert.is((await b.read('a')).remainingMs, 30_000);
    now += 5_000;
    assert.is((await b.read('a')).remainingMs, 60_000);
  });

  test('a budget of a fraction of a second counts milliseconds', async () => {
    const b = budget(50);
    assert.is((await b.charge('a', 20)).remainingMs, 30);
    assert.is((await b.charge('a', 40)).remainingMs, 0);
    assert.ok((await b.read('a')).retryAfterSeconds >= 1);
  });

  test.run();
}

budgetContract('memory', () => (perMinuteMs, clock) => new MemoryBudget(perMinuteMs, clock));

if (REDIS_BINARY) {
  let fixture: Awaited<ReturnType<typeof redisWithClients>>;
  const log = createLogger('silent');
  budgetContract(
    'redis',
    // A fresh prefix per budget: every case starts from an empty Redis namespace.
    () => (perMinuteMs, clock) =>
      new RedisBudget(perMinuteMs, { redis: fixture.clients[0]!, prefix: `test:${randomBytes(4).toString('hex')}:`, log, clock }),
    {
      before: async () => {
        fixture = await redisWithClients(2, 1000);
      },
      after: () => fixture.stop(),
    },
  );

  const shared = suite('heavy budget in Redis: shared, and kept through an outage');
  shared.before(async () => {
    fixture = await redisWithClients(2, 200);
  });
  shared.after(() => fixture.stop());

  shared("two replicas share one key's budget; with Redis gone, each counts what it charged itself and nothing fails", async () => {
    const prefix = `test:${randomBytes(4).toString('hex')}:`;
    const [a, b] = fixture.clients.map((redis) => new RedisBudget(10_000, { redis, prefix, log }));
    await a!.charge('k', 6_000);
    await b!.charge('k', 3_000);
    assert.is((await a!.read('k')).remainingMs, 1_000, 'A sees what B charged');
    assert.is((await b!.read('k')).unavailable, undefined);
    fixture.server.pause();
    try {
      // Timed out: each replica falls back to its own charges, and says so (GET /v1/usage's "limiter").
      const fallback = await a!.read('k');
      assert.is(fallback.remainingMs, 4_000);
      assert.is(fallback.unavailable, true);
      assert.is((await b!.charge('k', 2_000)).remainingMs, 5_000);
    } finally {
      fixture.server.resume();
    }
  });
  shared.run();
} else {
  skippedSuite('heavy budget contract: redis', REDIS_SKIP_REASON);
}

const noop = suite('noop heavy budget (BENCH_DISABLE_LIMITS)');
noop('charges nothing', async () => {
  const b = new NoopBudget(1000);
  await b.charge('a', 5000);
  assert.equal(await b.read('a'), { remainingMs: 1000, retryAfterSeconds: 0, usedMs: 0, resetSeconds: 0 });
});
noop.run();
