import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { REDIS_BINARY, REDIS_SKIP_REASON, type RedisServer, startRedis } from '../tools/redis-server.ts';
import { adminCli } from './helpers/admin-cli.ts';
import { until } from './helpers/redis.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';

// Two replicas on one Redis: GET /v1/usage reads the limiters' shared state, so both
// report the same figures; `admin usage --top` reads the counts every replica flushed;
// with Redis gone, usage still answers what this process knows.

if (!REDIS_BINARY) {
  skippedSuite('usage across replicas', REDIS_SKIP_REASON);
} else {
  const test = suite('usage across replicas');
  let redis: RedisServer;
  let a: TestService;
  let b: TestService;
  // One instant for both replicas and Redis's scripts: the figures cannot differ by a clock's tick.
  const now = Date.now();
  test.before(async () => {
    redis = await startRedis();
    const env = { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '250', USAGE_FLUSH_MS: '200', RATE_LIMIT_PER_MINUTE: '50' };
    a = await startTestService({ env, clock: () => now });
    b = await startTestService({ env, clock: () => now, dataDir: a.dataDir });
  });
  test.after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  test('two replicas on one Redis report identical limits; --top across them sums both', async () => {
    const other = (await b.admin('POST', '/keys', { client: 'second client' })).json;
    for (let i = 0; i < 3; i++) assert.is((await a.get('/v1/catalog')).status, 200);
    for (let i = 0; i < 4; i++) assert.is((await b.get('/v1/catalog', { key: a.key })).status, 200);
    assert.is((await b.get('/v1/releases', { key: other.key })).status, 200);
    const [fromA, fromB] = [(await a.get('/v1/usage')).json, (await b.get('/v1/usage', { key: a.key })).json];
    assert.is(fromA.limiter, 'redis');
    assert.equal(fromA.limits, fromB.limits);
    assert.equal(fromA.binding, fromB.binding);
    assert.is(fromA.limits.minute.used, 7);

    const top = async () => JSON.parse((await adminCli(a, 'usage', '--top', '20', '--json')).stdout);
    assert.ok(await until(async () => (await top()).keys[0]?.requests === 7, 10_000), 'both replicas flushed');
    const { keys } = await top();
    assert.equal(
      keys.map((k: { client: string; requests: number }) => [k.client, k.requests]),
      [
        ['test-suite', 7],
        ['second client', 1],
      ],
    );
    const table = await adminCli(b, 'usage', '--top', '1');
    assert.match(table.stdout, /^key_[0-9a-f]{16}\s+test-suite\s+7\s/m, 'either replica lists the sum');
  });

  test('with Redis stopped, usage answers 200 with "limiter": "unavailable" and what this process knows', async () => {
    await redis.stop();
    const res = await a.get('/v1/usage');
    assert.is(res.status, 200, res.text);
    assert.is(res.json.limiter, 'unavailable');
    assert.is(res.json.limits.minute.used, null);
    assert.is(res.json.limits.minute.limit, 50);
    assert.is(typeof res.json.limits.heavy_seconds_minute.remaining, 'number', "this replica's own heavy budget");
    assert.is(res.json.limits.exports_open.used, 0);
    const daily = await a.get('/v1/usage/daily');
    assert.is(daily.status, 503);
    assert.is(daily.headers['retry-after'], '5');
    // Data requests go on (the limiters fail open), and are counted for the next flush.
    assert.is((await a.get('/v1/catalog')).status, 200);
  });

  test.run();
}
