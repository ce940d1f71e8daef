import { DataQueryClient } from 'data-query-client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runQueryCli } from './helpers/query-cli.ts';
import { until } from './helpers/redis.ts';
import { send, startTestService, type TestService } from './helpers/service.ts';

// GET /v1/usage: every limit that can refuse the calling key, read from the limiters'
// own state, answered without counting and while the key is refused.

const limitsOf = async (service: TestService, key?: string) => {
  const res = await service.get('/v1/usage', { key });
  assert.is(res.status, 200, res.text);
  assert.is(res.headers['cache-control'], 'no-store');
  return res.json;
};

const heavyMetric = async (service: TestService) => {
  const text = (await send(`${service.adminUrl}/metrics`)).text;
  let sum = 0;
  for (const [, value] of text.matchAll(/^dqs_heavy_seconds_total\{[^}]*\} ([\d.e+-]+)$/gm)) sum += Number(value);
  return sum;
};

const counting = suite('GET /v1/usage: counts nothing, sees every data request, export and heavy second');
let service: TestService;
counting.before(async () => {
  service = await startTestService();
});
counting.after(async () => {
  await service?.stop();
});

counting('two usage calls leave day.used unchanged; three data requests raise it by 3', async () => {
  const first = await limitsOf(service);
  const second = await limitsOf(service);
  assert.is(second.limits.day.used, first.limits.day.used);
  assert.is(second.limits.minute.used, first.limits.minute.used);
  for (let i = 0; i < 3; i++) assert.is((await service.get('/v1/catalog')).status, 200);
  const after = await limitsOf(service);
  assert.is(after.limits.day.used, first.limits.day.used + 3);
  assert.is(after.limits.minute.used, first.limits.minute.used + 3);
  assert.is(after.key.client, 'test-suite');
  assert.is(after.limiter, 'memory');
  assert.is(after.binding, 'minute');
  assert.is(after.last_refused, null);
  assert.equal(Object.keys(after.limits), ['minute', 'day', 'exports_day', 'exports_open', 'heavy_seconds_minute', 'heavy_running']);
  assert.is(Date.parse(after.limits.day.reset_at) - Date.parse(after.as_of), after.limits.day.reset * 1000);
});

counting('after 2 exports, exports_day.used is 2', async () => {
  const before = (await limitsOf(service)).limits.exports_day.used;
  for (const country of ['France', 'Spain']) {
    const res = await service.get(`/v1/export?metric=ggr&country=${country}`, { headers: { accept: 'text/csv' } });
    assert.is(res.status, 200, res.text);
  }
  const { exports_day, exports_open } = (await limitsOf(service)).limits;
  assert.is(exports_day.used - before, 2);
  assert.is(exports_day.remaining, exports_day.limit - exports_day.used);
  assert.is(exports_day.window, 86_400);
  assert.is(exports_open.used, 0, 'both exports ended');
  assert.is(exports_open.window, null);
});

counting("after heavy requests, heavy_seconds_minute.used matches the server's heavy-seconds metric within 5%", async () => {
  const dims = ['country', 'region', 'product', 'channel'];
  for (let i = 0; i < 4; i++) {
    const res = await service.get(`/v1/aggregate?metric=ggr&fx=USD&group_by=${dims[i]},year&limit=5`);
    assert.is(res.status, 200, res.text);
  }
  // Charges settle as the work ends: the metric and the budget are charged together.
  const metric = await heavyMetric(service);
  assert.ok(metric > 0);
  const { heavy_seconds_minute: heavy, heavy_running: running } = (await limitsOf(service)).limits;
  assert.ok(Math.abs(heavy.used - metric) <= metric * 0.05, `usage ${heavy.used} s, metric ${metric} s`);
  assert.is(heavy.limit, 60);
  assert.ok(heavy.reset >= 1 && heavy.reset <= 60);
  assert.is(running.used, 0);
});

counting('the typed client and the query CLI read both endpoints', async () => {
  const client = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  const now = await client.usage();
  assert.is(now.key.client, 'test-suite');
  assert.is(now.limits.minute.limit, 1_000_000);
  const days = await client.usageDaily();
  assert.is(days.length, 7);
  assert.is(days.at(-1)!.date, now.as_of.slice(0, 10));
  const env = { DQS_URL: service.url, DQS_API_KEY: service.key };
  const printed = await runQueryCli(['usage'], env);
  assert.is(printed.code, 0, printed.stderr);
  assert.is(JSON.parse(printed.stdout.toString()).key.id, now.key.id);
  const daily = await runQueryCli(['usage', '--daily', '--start', days.at(-2)!.date], env);
  assert.is(daily.code, 0, daily.stderr);
  assert.equal(
    JSON.parse(daily.stdout.toString()).map((d: { date: string }) => d.date),
    days.slice(-2).map((d) => d.date),
  );
  const misplaced = await runQueryCli(['usage', '--start', days[0]!.date], env);
  assert.is(misplaced.code, 2);
  assert.match(misplaced.stderr, /--start and --end go with --daily/);
});

counting.run();

const refused = suite('GET /v1/usage: answers while the key is refused, and agrees with the headers');
let clock: { now: number };
let limited: TestService;
refused.before(async () => {
  clock = { now: Date.now() };
  limited = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '5' }, clock: () => clock.now });
});
refused.after(async () => {
  await limited?.stop();
});

refused('the 6th data request gets 429 with Retry-After N; usage answers 200 with minute.remaining 0 and reset within N ± 1', async () => {
  for (let i = 0; i < 5; i++) {
    assert.is((await limited.get('/v1/catalog')).status, 200);
    clock.now += 1000;
  }
  const sixth = await limited.get('/v1/catalog');
  assert.is(sixth.status, 429);
  const n = Number(sixth.headers['retry-after']);
  assert.ok(n >= 1, `Retry-After ${sixth.headers['retry-after']}`);
  const usage = await limitsOf(limited);
  assert.is(usage.limits.minute.remaining, 0);
  assert.is(usage.limits.minute.used, 5);
  assert.ok(Math.abs(usage.limits.minute.reset - n) <= 1, `reset ${usage.limits.minute.reset}, Retry-After ${n}`);
  assert.is(usage.binding, 'minute');
  assert.is(usage.last_refused.limit, 'minute');
  assert.is(usage.last_refused.path, '/v1/catalog');
  assert.is(usage.last_refused.retry_after, n);
  assert.is(usage.last_refused.request_id, sixth.headers['x-request-id']);
});

refused("on the next data request after a quiet minute, X-RateLimit-Remaining is usage's minute.remaining − 1", async () => {
  clock.now += 61_000;
  const usage = await limitsOf(limited);
  assert.is(usage.limits.minute.remaining, 5);
  const next = await limited.get('/v1/catalog');
  assert.is(next.status, 200);
  assert.is(Number(next.headers['x-ratelimit-remaining']), usage.limits.minute.remaining - 1);
});

refused("the 31st usage call in a minute gets the usage guard's 429; a revoked key gets 401", async () => {
  clock.now += 61_000;
  const other = (await limited.admin('POST', '/keys', { client: 'guarded' })).json;
  for (let i = 0; i < 30; i++) assert.is((await limited.get('/v1/usage', { key: other.key })).status, 200, `call ${i + 1}`);
  const guarded = await limited.get('/v1/usage', { key: other.key });
  assert.is(guarded.status, 429);
  assert.match(guarded.json.error, /^Too many usage requests: at most 30 per key per minute to \/v1\/usage/);
  assert.match(guarded.json.error, /USAGE_LIMIT_PER_MINUTE/);
  assert.is(guarded.headers['retry-after'], String(guarded.json.retryAfterSeconds));
  // Its data requests are not affected.
  assert.is((await limited.get('/v1/catalog', { key: other.key })).status, 200);
  assert.is((await limited.admin('POST', `/keys/${other.record.id}/revoke`)).status, 200);
  assert.ok(await until(async () => (await limited.get('/v1/usage', { key: other.key })).status === 401, 5000));
});

refused.run();
