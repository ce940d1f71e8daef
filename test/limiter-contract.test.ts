import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Clock } from '../src/clock.ts';
import type { Limiter, LimitPolicy } from '../src/limits/limiter.ts';
import { MemoryLimiter } from '../src/limits/memory.ts';
import { NoopLimiter } from '../src/limits/noop.ts';
import { RedisLimiter } from '../src/limits/redis.ts';
import { createLogger } from '../src/log.ts';
import { REDIS_BINARY, REDIS_SKIP_REASON } from '../tools/redis-server.ts';
import { redisWithClients } from './helpers/redis.ts';
import { skippedSuite } from './helpers/skip.ts';

// One contract for every limiter that counts (undici's cacheStoreTests(Store)
// pattern): spec section 8, with the clock moved by hand.

type MakeLimiter = (policy: LimitPolicy, clock: Clock) => Limiter;

const NOON = Date.UTC(2026, 10, 22, 12, 0, 0);
const SPEC = { perMinute: 100, perDay: 10_000 };

function limiterContract(name: string, make: () => MakeLimiter, hooks: { before?: () => Promise<void>; after?: () => Promise<void> } = {}) {
  const test = suite(`limiter contract: ${name}`);
  let now = NOON;
  const clock = () => now;
  const limiter = (policy: LimitPolicy = SPEC) => make()(policy, clock);
  if (hooks.before) test.before(hooks.before);
  if (hooks.after) test.after(hooks.after);
  test.before.each(() => {
    now = NOON;
  });

  test('admits 100 in a minute, refuses the 101st with the wait until the oldest comes back', async () => {
    const l = limiter();
    for (let i = 0; i < 100; i++) {
      const d = await l.consume('a');
      assert.ok(d.allowed, `request ${i + 1}`);
      assert.is(d.windows[0]!.remaining, 99 - i);
      now += 100;
    }
    const refused = await l.consume('a');
    assert.not.ok(refused.allowed);
    // The first was spent at NOON, now is NOON + 10 s: it comes back in 50 s.
    assert.is(refused.retryAfterSeconds, 50);
    assert.equal(
      refused.windows.map((w) => [w.name, w.limit, w.remaining]),
      [
        ['minute', 100, 0],
        ['day', 10_000, 9_900],
      ],
    );
    assert.is(refused.windows[0]!.resetSeconds, 50);
  });

  test('each unit comes back exactly 60 s after it was spent (a sliding log, not a refilling bucket)', async () => {
    const l = limiter({ perMinute: 3 });
    for (const offset of [0, 20_000, 40_000]) {
      now = NOON + offset;
      assert.ok((await l.consume('a')).allowed);
    }
    now = NOON + 59_999;
    const early = await l.consume('a');
    assert.not.ok(early.allowed);
    assert.is(early.retryAfterSeconds, 1);
    now = NOON + 60_000;
    assert.ok((await l.consume('a')).allowed, 'the first unit is back at +60 s');
    now = NOON + 79_999;
    assert.not.ok((await l.consume('a')).allowed, 'the second is not back before +80 s');
    now = NOON + 80_000;
    assert.ok((await l.consume('a')).allowed);
    // In no 60 s span were more than 3 admitted: a steady refill would have admitted more by now.
  });

  test('refused requests consume nothing', async () => {
    const l = limiter({ perMinute: 2, perDay: 5 });
    assert.ok((await l.consume('a')).allowed);
    assert.ok((await l.consume('a')).allowed);
    for (let i = 0; i < 20; i++) {
      now += 1000;
      assert.not.ok((await l.consume('a')).allowed);
    }
    now = NOON + 60_000;
    const back = await l.consume('a');
    assert.ok(back.allowed);
    assert.is(back.windows[0]!.remaining, 1, 'both first units came back at +60 s; this request spent one');
    assert.is(back.windows[1]!.remaining, 2, 'the day counted 3 admissions and none of the refusals');
  });

  test('the UTC day: refused until midnight, Retry-After counts to it, then a fresh quota', async () => {
    const l = limiter({ perMinute: 100, perDay: 250 });
    now = Date.UTC(2026, 10, 22, 23, 50, 0);
    for (let i = 0; i < 250; i++) {
      if (i % 100 === 0) now += 60_000;
      assert.ok((await l.consume('a')).allowed, `request ${i + 1}`);
    }
    now += 60_000; // the minute window has room again; the day has none
    const refused = await l.consume('a');
    assert.not.ok(refused.allowed);
    const toMidnight = (Date.UTC(2026, 10, 23) - now) / 1000;
    assert.is(refused.retryAfterSeconds, toMidnight);
    assert.equal(
      refused.windows.map((w) => [w.name, w.remaining, w.resetSeconds]),
      [
        ['minute', 100, 0],
        ['day', 0, toMidnight],
      ],
    );
    now = Date.UTC(2026, 10, 23) - 1;
    assert.not.ok((await l.consume('a')).allowed);
    now = Date.UTC(2026, 10, 23);
    const fresh = await l.consume('a');
    assert.ok(fresh.allowed);
    assert.is(fresh.windows[1]!.remaining, 249);
    assert.is(fresh.windows[1]!.resetSeconds, 86_400);
  });

  test('when both windows are full, the later one decides Retry-After', async () => {
    const l = limiter({ perMinute: 2, perDay: 2 });
    await l.consume('a');
    await l.consume('a');
    const refused = await l.consume('a');
    assert.is(refused.retryAfterSeconds, 12 * 3600, 'noon to midnight');
  });

  test('peek reports what consume would decide, and counts nothing', async () => {
    const l = limiter({ perMinute: 2, perDay: 5 });
    const fresh = await l.peek('a');
    assert.ok(fresh.allowed);
    assert.equal(
      fresh.windows.map((w) => w.remaining),
      [2, 5],
    );
    await l.consume('a');
    for (let i = 0; i < 3; i++)
      assert.equal(
        (await l.peek('a')).windows.map((w) => w.remaining),
        [1, 4],
      );
    await l.consume('a');
    const full = await l.peek('a');
    assert.not.ok(full.allowed);
    assert.is(full.retryAfterSeconds, 60);
    now += 60_000;
    assert.ok((await l.consume('a')).allowed, 'peeks spent nothing');
  });

  test('ids are counted apart', async () => {
    const l = limiter({ perMinute: 1 });
    assert.ok((await l.consume('a')).allowed);
    assert.not.ok((await l.consume('a')).allowed);
    assert.ok((await l.consume('b')).allowed);
  });

  test('a policy without a day window reports only the minute', async () => {
    const d = await limiter({ perMinute: 30 }).consume('198.51.100.7');
    assert.equal(d.windows, [{ name: 'minute', limit: 30, remaining: 29, resetSeconds: 60, windowSeconds: 60 }]);
  });

  test('150 at once on one id: exactly 100 admitted, 50 refused', async () => {
    const l = limiter();
    const decisions = await Promise.all(Array.from({ length: 150 }, () => l.consume('burst')));
    assert.is(decisions.filter((d) => d.allowed).length, 100);
    assert.ok(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterSeconds === 60));
  });

  test.run();
}

limiterContract('memory', () => (policy, clock) => new MemoryLimiter(policy, clock));

if (REDIS_BINARY) {
  let fixture: Awaited<ReturnType<typeof redisWithClients>>;
  const log = createLogger('silent');
  limiterContract(
    'redis',
    // A fresh prefix per limiter: every case starts from an empty Redis namespace.
    () => (policy, clock) =>
      new RedisLimiter(policy, { redis: fixture.clients[0]!, prefix: `test:${randomBytes(4).toString('hex')}:`, log, clock }),
    {
      before: async () => {
        fixture = await redisWithClients(1, 1000);
      },
      after: () => fixture.stop(),
    },
  );
} else {
  skippedSuite('limiter contract: redis', REDIS_SKIP_REASON);
}

const noop = suite('noop limiter (BENCH_DISABLE_LIMITS)');
noop('admits everything and reports the whole quota', async () => {
  const l = new NoopLimiter(SPEC, () => NOON);
  for (let i = 0; i < 300; i++) assert.ok((await l.consume('a')).allowed);
  const d = await l.consume('a');
  assert.equal(
    d.windows.map((w) => w.remaining),
    [100, 10_000],
  );
  assert.equal(
    (await l.peek('a')).windows.map((w) => w.remaining),
    [100, 10_000],
  );
});
noop.run();
