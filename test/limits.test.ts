import { Redis } from 'ioredis';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { REDIS_BINARY, REDIS_SKIP_REASON, startRedis } from '../tools/redis-server.ts';
import { type Response, send, startTestService, type TestService } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// Spec section 8 over real HTTP, with the spec's limits and the clock moved by hand
// (the memory backend; test/replicas.test.ts runs Redis across processes).

const SPEC_LIMITS = { RATE_LIMIT_PER_MINUTE: '100', RATE_LIMIT_PER_DAY: '10000', BAD_KEY_LIMIT_PER_MINUTE: '30' };
const NOON = Date.UTC(2026, 10, 22, 12, 0, 0);
const TOO_MANY = 'Too many requests — please try again later';

let now = NOON;
let service: TestService;
const limits = suite('rate limits over HTTP');
limits.before(async () => {
  service = await startTestService({ env: SPEC_LIMITS, clock: () => now });
});
limits.after(() => service.stop());
limits.before.each(() => {
  now += 24 * 3600_000; // a new day: every case starts with the whole quota
});

const newKey = async () => (await service.admin('POST', '/keys', { client: 'limits' })).json.key as string;

function assertHeaders(res: Response, limit: number, remaining: number, reset: number) {
  assert.is(res.headers['x-ratelimit-limit'], String(limit), `${res.status} X-RateLimit-Limit`);
  assert.is(res.headers['x-ratelimit-remaining'], String(remaining), `${res.status} X-RateLimit-Remaining`);
  assert.is(res.headers['x-ratelimit-reset'], String(reset), `${res.status} X-RateLimit-Reset`);
}

limits('the 101st request in a minute is a 429 with the exact body, Retry-After and headers', async () => {
  const key = await newKey();
  for (let i = 0; i < 100; i++) {
    const res = await service.get('/v1/catalog', { key });
    assert.is(res.status, 200, `request ${i + 1}`);
    if (i === 0) now += 15_000; // the rest arrive 15 s after the first
  }
  const res = await service.get('/v1/catalog', { key });
  assert.is(res.status, 429);
  assert.is(res.text, `{"error":"${TOO_MANY}","retryAfterSeconds":45}`);
  assert.is(res.headers['retry-after'], '45');
  assertHeaders(res, 100, 0, 45);
  assert.is(res.headers['ratelimit-policy'], '"minute";q=100;w=60, "day";q=10000;w=86400');
  assert.is(res.headers.ratelimit, `"minute";r=0;t=45, "day";r=9900;t=${12 * 3600 - 15}`);
  assert.match(String(res.headers['content-type']), /application\/json/);
});

limits('refused requests consume nothing: the first unit is back exactly 60 s after it was spent', async () => {
  const key = await newKey();
  const start = now;
  for (let i = 0; i < 100; i++) {
    assert.is((await service.get('/v1/catalog', { key })).status, 200);
    now += 100;
  }
  for (let i = 0; i < 30; i++) assert.is((await service.get('/v1/catalog', { key })).status, 429);
  now = start + 59_999;
  const last = await service.get('/v1/catalog', { key });
  assert.is(last.status, 429);
  assert.is(last.json.retryAfterSeconds, 1);
  now = start + 60_000;
  const back = await service.get('/v1/catalog', { key });
  assert.is(back.status, 200);
  assertHeaders(back, 100, 0, 1);
  assert.is(back.headers.ratelimit, `"minute";r=0;t=1, "day";r=9899;t=${(86_400_000 - ((start + 60_000) % 86_400_000)) / 1000}`);
});

limits('headers on 200, 400, 404 and 405 under /v1, each counted', async () => {
  const key = await newKey();
  const cases: Array<[string, string, number]> = [
    ['GET', '/v1/financials?metric=ggr&limit=1', 200],
    ['GET', '/v1/financials?metric=nope', 400],
    ['GET', '/v1/nowhere', 404],
    ['GET', '/v1', 404],
    ['POST', '/v1/catalog', 405],
  ];
  let remaining = 100;
  for (const [method, path, status] of cases) {
    const res = await service.get(path, { key, method });
    assert.is(res.status, status, path);
    assertHeaders(res, 100, --remaining, 60);
    assert.ok(res.headers['ratelimit-policy'] && res.headers.ratelimit, path);
  }
  // Outside /v1 nothing is counted; the headers say what is left (spec 8.2: every response).
  const health = await service.get('/healthz', { key });
  assertHeaders(health, 100, remaining, 60);
});

limits('every spelling of a /v1 path the router serves needs a key and counts', async () => {
  const key = await newKey();
  const paths = ['/V1/catalog', '/v1/CATALOG', '/v1/catalog/', '/V1/financials?metric=ggr&limit=1'];
  for (const path of paths) assert.is((await service.get(path, { key: null })).status, 401, path);
  for (const [i, path] of paths.entries()) {
    const res = await service.get(path, { key });
    assert.is(res.status, 200, path);
    assert.is(res.headers['x-ratelimit-remaining'], String(99 - i), path);
  }
});

limits('the day window: 10,000 per UTC day, then 429 until midnight', async () => {
  const day = await startTestService({ dataDir: service.dataDir, env: { ...SPEC_LIMITS, RATE_LIMIT_PER_DAY: '250' }, clock: () => now });
  try {
    now = Date.UTC(2026, 11, 31, 23, 0, 0);
    const key = (await day.admin('POST', '/keys', { client: 'day' })).json.key;
    for (let i = 0; i < 250; i++) {
      if (i % 100 === 0) now += 60_000;
      assert.is((await day.get('/v1/catalog', { key })).status, 200, `request ${i + 1}`);
    }
    now += 60_000;
    const res = await day.get('/v1/catalog', { key });
    assert.is(res.status, 429);
    const toMidnight = (Date.UTC(2027, 0, 1) - now) / 1000;
    assert.equal(res.json, { error: TOO_MANY, retryAfterSeconds: toMidnight });
    assert.is(res.headers['retry-after'], String(toMidnight));
    // The day window has the least remaining now, so X-RateLimit-* speak of it.
    assertHeaders(res, 250, 0, toMidnight);
    now = Date.UTC(2027, 0, 1);
    const fresh = await day.get('/v1/catalog', { key });
    assert.is(fresh.status, 200);
    assertHeaders(fresh, 100, 99, 60);
  } finally {
    await day.stop();
  }
});

limits('150 concurrent requests on one key: exactly 100 admitted', async () => {
  const key = await newKey();
  const statuses = await Promise.all(Array.from({ length: 150 }, () => service.get('/v1/catalog', { key }).then((r) => r.status)));
  assert.is(statuses.filter((s) => s === 200).length, 100);
  assert.is(statuses.filter((s) => s === 429).length, 50);
});

limits('keys are limited apart', async () => {
  const [a, b] = [await newKey(), await newKey()];
  for (let i = 0; i < 100; i++) await service.get('/v1/catalog', { key: a });
  assert.is((await service.get('/v1/catalog', { key: a })).status, 429);
  assert.is((await service.get('/v1/catalog', { key: b })).status, 200);
});

limits('spec 8.2 on every answer: a valid key outside /v1 gets the limit headers, read without counting', async () => {
  const key = await newKey();
  assertHeaders(await service.get('/v1/catalog', { key }), 100, 99, 60);
  for (const path of ['/', '/v2/catalog', '/docs', '/openapi.json', '/healthz', '/claim/assets/claim.css']) {
    assertHeaders(await send(`${service.url}${path}`, { headers: { 'x-api-key': key } }), 100, 99, 60);
  }
  assertHeaders(await service.get('/v1/catalog', { key }), 100, 98, 60);
  // Without a key, or with one nobody issued, nothing changes outside /v1.
  for (const res of [await service.get('/', { key: null }), await service.get('/', { key: `sk_live_${'z'.repeat(40)}` })]) {
    assert.is(res.status, 200);
    assert.is(res.headers['x-ratelimit-limit'], undefined);
  }
});

limits.run();

const guard = suite('bad-key guard');
let guarded: TestService;
guard.before(async () => {
  guarded = await startTestService({ dataDir: service.dataDir, env: SPEC_LIMITS, clock: () => now });
});
guard.after(() => guarded.stop());

guard('30 missing or invalid keys a minute from one address, then 429 until the window passes; a valid key is untouched', async () => {
  const start = now;
  const bad = [null, `sk_live_${'x'.repeat(40)}`, 'not-a-key', ''] as const;
  for (let i = 0; i < 30; i++) {
    const res = await guarded.get('/v1/catalog', { key: bad[i % bad.length] });
    assert.is(res.status, 401, `attempt ${i + 1}`);
    assertHeaders(res, 30, 29 - i, 60);
    assert.is(res.headers['ratelimit-policy'], '"bad-key-minute";q=30;w=60');
  }
  const blocked = await guarded.get('/v1/catalog', { key: `sk_live_${'y'.repeat(40)}` });
  assert.is(blocked.status, 429);
  assert.equal(blocked.json, { error: TOO_MANY, retryAfterSeconds: 60 });
  assert.is(blocked.headers['retry-after'], '60');

  // The same address with a valid key: served and charged to the key only.
  const valid = await guarded.get('/v1/catalog');
  assert.is(valid.status, 200);
  assertHeaders(valid, 100, 99, 60);
  assert.is((await guarded.get('/v1/catalog', { key: null })).status, 429);

  now = start + 60_000;
  const after = await guarded.get('/v1/catalog', { key: null });
  assert.is(after.status, 401);
  assert.is(after.json.error, 'Missing x-api-key header');
});

guard('unknown, revoked and malformed keys get the same 401 body', async () => {
  now += 120_000;
  const created = (await guarded.admin('POST', '/keys', { client: 'to-revoke' })).json;
  await guarded.admin('POST', `/keys/${created.record.id}/revoke`);
  const bodies = new Set<string>();
  for (const key of [created.key, `sk_live_${'z'.repeat(40)}`, 'sk_live_short', 'Bearer abc', `sk_live_${'!'.repeat(40)}`]) {
    const res = await guarded.get('/v1/catalog', { key });
    assert.is(res.status, 401, key);
    bodies.add(res.text);
  }
  assert.equal([...bodies], ['{"error":"Invalid or revoked API key"}']);
});

guard('x-api-key sent twice is a 401 naming the problem, even with two valid keys', async () => {
  now += 120_000;
  const res = await guarded.get('/v1/catalog', { key: null, headers: { 'x-api-key': [guarded.key, guarded.key] } });
  assert.is(res.status, 401);
  assert.equal(res.json, { error: 'Duplicate x-api-key header: send exactly one' });
});

guard.run();

// A key this replica does not hold is looked up in Redis only for an
// address the bad-key guard still admits.
if (!REDIS_BINARY) skippedSuite('bad-key guard with Redis', REDIS_SKIP_REASON);
else {
  const shared = suite('bad-key guard with Redis');
  shared('an address refused for bad keys costs no key lookup in Redis; a valid key from it still works', async () => {
    const redis = await startRedis();
    const served = await startTestService({ env: { REDIS_URL: redis.url, BAD_KEY_LIMIT_PER_MINUTE: '2' } });
    const client = new Redis(redis.url);
    const hgets = async () => Number(/cmdstat_hget:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0);
    try {
      const unknown = (i: number) => `sk_live_${String(i).padStart(40, 'q')}`;
      for (let i = 0; i < 2; i++) assert.is((await served.get('/v1/catalog', { key: unknown(i) })).status, 401);
      const before = await hgets();
      for (let i = 2; i < 12; i++) assert.is((await served.get('/v1/catalog', { key: unknown(i) })).status, 429);
      assert.is(await hgets(), before, 'no HGET for a refused address');
      assert.is((await served.get('/v1/catalog')).status, 200, 'the valid key is held by the replica and served');
    } finally {
      client.disconnect();
      await served.stop();
      await redis.stop();
    }
  });
  shared.run();
}
